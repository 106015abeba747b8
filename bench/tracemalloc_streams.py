"""Python memory per idle GET stream, line by line (tracemalloc), on one in-process worker.

Not a test: run by hand. RSS per stream (``bench_fanout.py``) moves by a few hundred bytes from
run to run; this counts what Python allocates for N idle streams, attributed to the line that
allocated it, so a change of ~100 bytes a stream shows. One uvicorn worker (uvloop, httptools)
runs in this process with the Redis stores and the demo registry (SQLite); the N streams are
``harness.streams.Stream`` protocols in the same loop, their own allocations filtered out.

    .venv/bin/python bench/tracemalloc_streams.py [--streams 1000] [--top 40] [--redis URL]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import tracemalloc
from pathlib import Path

from harness import ROOT
from harness import streams as held_streams
from harness.servers import clean_redis, manage_bench_db, our_env

PORT = 47999


async def measure(streams: int, top: int) -> None:
    import uvicorn

    from mcpsite.asgi import application

    config = uvicorn.Config(application, host="127.0.0.1", port=PORT, loop="none", http="httptools",
                            log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    serving = asyncio.ensure_future(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn.Server offers a flag, not an event
        await asyncio.sleep(0.05)
    sessions = await held_streams.gather_limited(
        [lambda: held_streams.new_session(PORT) for _ in range(streams)])
    counter = held_streams.Counter(streams)
    opened = [held_streams.Stream(PORT, sid, counter) for sid in sessions]
    await asyncio.sleep(1.0)
    gc.collect()
    before = tracemalloc.take_snapshot()
    tasks = [asyncio.ensure_future(s.run()) for s in opened]
    await asyncio.wait_for(asyncio.gather(*(s.opened.wait() for s in opened)), 60)
    await asyncio.sleep(2.0)  # idle
    gc.collect()
    after = tracemalloc.take_snapshot()
    ours = [tracemalloc.Filter(False, held_streams.__file__), tracemalloc.Filter(False, tracemalloc.__file__)]
    diff = after.filter_traces(ours).compare_to(before.filter_traces(ours), "lineno")
    print(f"{sum(d.size_diff for d in diff) / streams:.0f} B per idle stream ({streams} streams)")
    for d in diff[:top]:
        frame = d.traceback[0]
        print(f"{d.size_diff / streams:8.0f} B {d.count_diff / streams:6.2f} objects  "
              f"{frame.filename.replace(str(ROOT) + '/', '')}:{frame.lineno}")
    for stream in opened:
        stream.close()
    server.should_exit = True
    await serving
    for task in tasks:
        task.cancel()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--top", type=int, default=40, help="lines to print, largest first")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mcptracemalloc-"))
    manage_bench_db(workdir, "migrate", "--noinput")
    manage_bench_db(workdir, "load_demo")
    os.environ.update(our_env(workdir, False, args.redis))
    os.environ.update({"MCP_MAX_SESSIONS_PER_PRINCIPAL": "1000000", "MCP_MAX_SESSIONS": "1000000"})
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    tracemalloc.start(1)
    try:
        held_streams.run(measure(args.streams, args.top))
    finally:
        clean_redis(args.redis)
    return 0


if __name__ == "__main__":
    sys.exit(main())
