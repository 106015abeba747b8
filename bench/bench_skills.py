"""Skills (SEP-2640) in the protocol core, CPU per request, beside tools/list of 100 tools.

In-process (``mcp_protocol.server.Server.handle`` on one legacy session, the memory provider, JSON
encoding of each response included): ``skills/list`` of 500 skills (3 files each; the wire cache
keeps the listing per snapshot as for tools/list, so this is the served cost), ``skills/list`` on
a new snapshot each time (the uncached cost), ``resources/read`` of a 1 MiB text skill file and of
a 1 MiB binary one (base64 per read), and ``tools/list`` of 100 tools, measured back to back in one
run, ``rounds`` rounds, the median per request of ``time.process_time``.

    .venv/bin/python bench/bench_skills.py [--requests 200] [--rounds 5] [--served]

``--served`` measures the same requests over HTTP against a real server process (uvicorn, the
registry provider on a SQLite database with the demo, filler tools to 100 and the same 500 skills
loaded by ``load_skills``): the server process's CPU (``/proc``) per request, one keep-alive
client sending them one after another, so HTTP, JSON-RPC framing and the snapshot from the
database are all in the figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.httpclient import RawConnection, address
from harness.loadgen import message_of, open_session, session_headers
from harness.servers import cpu_seconds, our_env, prepare_database

from mcp_protocol.definitions import Tool
from mcp_protocol.jsonrpc import Notification, Request
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.outbound import Outbound
from mcp_protocol.server import Server
from mcp_protocol.session import Session
from mcp_protocol.skills import Skill, SkillFile

MIB = 1024 * 1024


class Quiet(Outbound):
    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        pass

    async def request(self, method: str, params: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        raise RuntimeError("no client")


def skill(i: int) -> Skill:
    name = f"skill-{i:03d}"
    text = f"---\nname: {name}\ndescription: Skill {i}\n---\n\nBody {i}.\n"
    files = (
        SkillFile("SKILL.md", "text/markdown", text=text),
        SkillFile("references/GUIDE.md", "text/markdown", text="# Guide\n" * 20),
        SkillFile("scripts/run.py", "text/x-python", text="print('hi')\n"),
    )
    if i == 0:
        big = bytes(range(256)) * (MIB // 256)
        files += (
            SkillFile("data/big.txt", "text/plain", text="x" * MIB),
            SkillFile("data/big.bin", "application/octet-stream", data=big),
        )
    return Skill(f"team/{name}", {"name": name, "description": f"Skill {i}"}, files)


async def tool_fn(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {"content": []}


def provider() -> MemoryProvider:
    tools = [(Tool(f"tool_{i:03d}", {"type": "object", "properties": {"a": {"type": "string"}}},
                   description=f"Tool {i}"), tool_fn) for i in range(100)]
    return MemoryProvider(tools=tools, resources=(), prompts=(), skills=[skill(i) for i in range(500)])


async def measure(server: Server, session: Session, method: str, params: dict[str, Any], n: int,
                  fresh: MemoryProvider | None = None) -> float:
    out = Quiet()
    start = time.process_time()
    for i in range(n):
        if fresh is not None:
            fresh._rebuild()  # a new snapshot version: nothing cached
        response = await server.handle(Request(i + 1, method, params), session, out)
        assert response is not None and "result" in response, response
        json.dumps(response)
    return (time.process_time() - start) / n


async def main(requests: int, rounds: int) -> dict[str, float]:
    mem = provider()
    server = Server(mem, name="bench", version="0", cursor_secret=b"bench", page_size=1000)
    session = Session.create()
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}}
    await server.handle(Request(0, "initialize", init), session, Quiet())
    await server.handle(Notification("notifications/initialized", None), session, Quiet())
    cases = {
        "tools/list (100 tools)": ("tools/list", {}, requests, None),
        "skills/list (500 skills, served)": ("skills/list", {}, requests, None),
        "skills/list (500 skills, new snapshot each)": ("skills/list", {}, max(requests // 10, 5), mem),
        "resources/read 1 MiB text skill file": ("resources/read", {"uri": "skill://team/skill-000/data/big.txt"},
                                                 requests, None),
        "resources/read 1 MiB binary skill file": ("resources/read", {"uri": "skill://team/skill-000/data/big.bin"},
                                                   max(requests // 4, 5), None),
    }
    results: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(rounds):
        for name, (method, params, n, fresh) in cases.items():
            results[name].append(await measure(server, session, method, params, n, fresh))
    return {k: statistics.median(v) for k, v in results.items()}


def write_skill_folder(root: Path) -> None:
    """The in-process set as folders ``load_skills`` reads (``team/skill-NNN/...``)."""
    for i in range(500):
        made = skill(i)
        for item in made.files:
            target = root / made.path / item.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(item.raw)


async def served_cpu(url: str, pid: int, body: dict[str, Any], n: int) -> float:
    """Server CPU seconds per request for ``n`` sequential requests of ``body`` on one session
    (``/proc`` counts in clock ticks, 10 ms here: the lists run 5 times the requests)."""
    connection = RawConnection(*address(url), "/mcp")
    try:
        session = await open_session(connection)
        headers = session_headers(session)
        encoded = json.dumps(body).encode()
        start = cpu_seconds(pid)
        for _ in range(n):
            answer = await connection.send("POST", encoded, headers)
            if answer.status != 200 or "result" not in message_of(answer):
                raise SystemExit(f"{body['method']}: HTTP {answer.status} {answer.body[:200]!r}")
        return (cpu_seconds(pid) - start) / n
    finally:
        await connection.close()


def served(requests: int, rounds: int) -> dict[str, float]:
    import tempfile

    from tests.support.live_server import LiveServer
    from tests.support.manage import manage

    big = "skill://team/skill-000/data/big"
    cases = {
        "tools/list (100 tools)": ({"method": "tools/list"}, requests * 5),
        # The served default page: 100 of the 500 skills (MCP["PAGE_SIZE"]; pages never split an
        # entry), against tools/list's one page of 100 tools.
        "skills/list (first page: 100 of 500 skills)": ({"method": "skills/list"}, requests * 5),
        "resources/read 1 MiB text skill file": (
            {"method": "resources/read", "params": {"uri": big + ".txt"}}, requests),
        "resources/read 1 MiB binary skill file": (
            {"method": "resources/read", "params": {"uri": big + ".bin"}}, requests),
    }
    with tempfile.TemporaryDirectory(prefix="mcpbench-skills-") as tmp:
        workdir = Path(tmp)
        prepare_database(workdir, 100)
        write_skill_folder(workdir / "skills")
        manage(our_env(workdir), "load_skills", str(workdir / "skills"), timeout=600)
        env = our_env(workdir)
        results: dict[str, list[float]] = {k: [] for k in cases}
        with LiveServer(env=env, migrate=False) as server:
            assert server.process is not None
            for _ in range(rounds):
                for name, (method, n) in cases.items():
                    body = {"jsonrpc": "2.0", "id": 1, **method}
                    results[name].append(asyncio.run(served_cpu(server.url, server.process.pid, body, n)))
    return {k: statistics.median(v) for k, v in results.items()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--served", action="store_true", help="over HTTP against a real server process")
    args = parser.parse_args()
    if args.served:
        medians = served(args.requests, args.rounds)
    else:
        medians = asyncio.run(main(args.requests, args.rounds))
    print(f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}")
    base = medians["tools/list (100 tools)"]
    for name, seconds in medians.items():
        print(f"{name:48s} {seconds * 1e3:9.3f} ms CPU/request  ({seconds / base:6.1f}x tools/list)")
