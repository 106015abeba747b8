"""An upstream MCP server nobody here wrote, as a process of its own on loopback: the official
Python SDK's ``MCPServer`` over Streamable HTTP (issue 40, the calls' tests and bench).

    with UpstreamProcess() as up:        # up.url: http://127.0.0.1:<port>/mcp
        ...
        up.kill()                        # SIGKILL, mid-call if a call is running

Its definitions:

- tools ``echo(text)``, ``add(a, b)`` (structured output), ``fail()`` (raises: an ``isError``
  result), ``slow(seconds, steps, key)`` (reports ``steps`` progress notifications, then waits;
  records ``done``/``cancelled`` under ``key``), ``hold(key)`` (0.3 s, records the most running
  at once under ``key``), ``events(key)`` (what was recorded under ``key``), ``big(kib)``,
  ``chatty(text)`` (logs ``text`` at info, then returns it), ``interview()`` (2026-07-28: asks the
  client for a name and its roots by an input-required result, MRTR; answers with what it got);
- resource ``memo://readme``, template ``memo://notes/{slug}``;
- prompt ``greet(who)``; completion for ``greet``'s ``who`` and the template's ``slug``.

A process, not a thread, so a test can kill it mid-call (tests/faults) and so the bench measures
it as an upstream on its own cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from types import TracebackType
from typing import Any

import httpx
from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import Completion, PromptReference, ResourceTemplateReference

from .manage import ROOT
from .ports import free_port

NAMES = ("alice", "albert", "bob")


def build_server() -> MCPServer:
    server = MCPServer("sdk-upstream-process", version="1.0")
    events: dict[str, list[str]] = defaultdict(list)
    running: dict[str, int] = defaultdict(int)

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Always fails.")
    def fail() -> str:
        raise ToolError("the upstream tool failed on purpose")

    @server.tool(description="A result of `kib` KiB of text.")
    def big(kib: int) -> str:
        return "x" * (kib * 1024)

    @server.tool(description="Progress, then a wait; records done or cancelled under key.")
    async def slow(seconds: float, steps: int, key: str, ctx: Context) -> str:
        try:
            for step in range(1, steps + 1):
                await ctx.report_progress(step, steps, f"step {step}")
                await asyncio.sleep(0.05)
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            events[key].append("cancelled")
            raise
        events[key].append("done")
        return f"slept {seconds}"

    @server.tool(description="Holds 0.3 s; records the most held at once under key.")
    async def hold(key: str) -> str:
        running[key] += 1
        events[f"peak:{key}"].append(str(running[key]))
        try:
            await asyncio.sleep(0.3)
        finally:
            running[key] -= 1
        return "held"

    @server.tool(description="Logs the text at info, then returns it.")
    async def chatty(text: str, ctx: Context) -> str:
        await ctx.info(text, logger_name="chatty")
        return text

    @server.tool(description="Asks the client for a name and its roots (an input-required result).")
    async def interview(ctx: Context) -> Any:
        answers = ctx.input_responses or {}
        if "name" not in answers or "roots" not in answers:
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            return types.InputRequiredResult(input_requests={
                "name": types.ElicitRequest(params=types.ElicitRequestFormParams(
                    message="Your name?", requested_schema=schema)),
                "roots": types.ListRootsRequest(),
            }, request_state="asked")
        name = answers["name"]
        roots = answers["roots"]
        given = getattr(name, "content", None) or {}
        uris = [str(root.uri) for root in getattr(roots, "roots", [])]
        return f"name={given.get('name')} roots={','.join(uris)} state={ctx.request_state}"

    @server.tool(description="What was recorded under key.")
    def recorded(key: str) -> list[str]:
        return list(events[key])

    @server.resource("memo://readme", name="readme", mime_type="text/plain", description="A memo.")
    def readme() -> str:
        return "hello from upstream"

    @server.resource("memo://notes/{slug}", name="note", mime_type="text/plain")
    def note(slug: str) -> str:
        return f"note {slug}"

    @server.prompt(description="Greet someone.")
    def greet(who: str) -> str:
        return f"Hello {who}"

    @server.completion()
    async def complete(ref, argument, context):  # type: ignore[no-untyped-def]
        if isinstance(ref, PromptReference) and argument.name == "who":
            return Completion(values=[n for n in NAMES if n.startswith(argument.value)])
        if isinstance(ref, ResourceTemplateReference) and argument.name == "slug":
            return Completion(values=[s for s in ("one", "two") if s.startswith(argument.value)])
        return None

    return server


class UpstreamProcess:
    """The server of ``module`` (its ``main``) as a process of its own on a free loopback port."""

    module = "tests.support.sdk_upstream_process"
    label = "the SDK upstream"

    def __init__(self, port: int | None = None, json_response: bool = False) -> None:
        # JSON responses instead of SSE streams (the bench: cheaper; no progress notifications then).
        self.json_response = json_response
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        command = [sys.executable, "-m", self.module, "--port", str(self.port)]
        if self.json_response:
            command.append("--json")
        return command

    def start(self) -> UpstreamProcess:
        command = self.command()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.label} exited with {self.process.returncode}")
            try:
                httpx.get(self.url, timeout=0.5)
                return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.label} did not start")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> UpstreamProcess:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    import uvicorn

    app = build_server().streamable_http_app(json_response=options.json)
    uvicorn.run(app, host="127.0.0.1", port=options.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
