// The official TypeScript SDK (installed with the conformance suite in .tools/) driving
// 2025-11-25 tasks against MCP_URL: a task-augmented tools/call through its experimental tasks
// client (callToolStream with options.task), then tasks/get, tasks/list and tasks/result; then a
// task that asks a question (confirm_delete): the SDK sees input_required, calls tasks/result and
// answers the elicitation/create that comes on its stream (tasks.mdx "Input Required Status").
// Prints one JSON line of what it saw, for tests/integration/test_tasks_workers.py. The SDK is
// imported from MCP_SDK_DIR (an ES module resolves packages from its own folder, not .tools/).
const sdk = process.env.MCP_SDK_DIR;
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);
const { CallToolResultSchema, ElicitRequestSchema } = await import(`${sdk}/dist/esm/types.js`);

const capabilities = { tasks: {}, elicitation: {} };
const client = new Client({ name: "sdk-tasks", version: "1.0.0" }, { capabilities });
const elicited = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicited.push(request.params._meta?.["io.modelcontextprotocol/related-task"] ?? null);
  return { action: "accept", content: { confirm: true } };
});
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.MCP_URL)));
const seen = { serverTasks: client.getServerCapabilities()?.tasks ?? null, messages: [] };
const stream = client.experimental.tasks.callToolStream(
  { name: "slow_compute", arguments: { seconds: 0.3 } }, CallToolResultSchema, { task: { ttl: 30000 } });
let taskId;
for await (const message of stream) {
  seen.messages.push(message.type);
  if (message.type === "taskCreated") taskId = message.task.taskId;
  if (message.type === "result") seen.text = message.result.content[0].text;
  if (message.type === "error") seen.error = String(message.error);
}
seen.get = (await client.experimental.tasks.getTask(taskId)).status;
seen.listed = (await client.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === taskId);
seen.payload = (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).content[0].text;
const asking = client.experimental.tasks.callToolStream(
  { name: "confirm_delete", arguments: { filename: "sdk.txt" } }, CallToolResultSchema, { task: {} });
seen.asking = [];
for await (const message of asking) {
  seen.asking.push(message.type === "taskStatus" ? message.task.status : message.type);
  if (message.type === "taskCreated") seen.askingId = message.task.taskId;
  if (message.type === "result") seen.answered = message.result.content[0].text;
  if (message.type === "error") seen.askingError = String(message.error);
}
seen.elicited = elicited;
console.log(JSON.stringify(seen));
await client.close();
