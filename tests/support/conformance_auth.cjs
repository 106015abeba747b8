// Preloaded into the conformance suite's node process (node --require) by
// tests/integration/test_conformance_auth.py: the suite has no option for credentials, so every
// fetch it makes (POST, GET streams, DELETE) carries Authorization: Bearer $MCP_CONFORMANCE_TOKEN.
"use strict";
const token = process.env.MCP_CONFORMANCE_TOKEN;
const original = globalThis.fetch;
globalThis.fetch = (input, init = {}) => {
  const base = init.headers ?? (input instanceof Request ? input.headers : undefined);
  const headers = new Headers(base);
  if (token && !headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
  return original(input, { ...init, headers });
};
