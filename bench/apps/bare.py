"""The ceiling for ``/mcp``: a bare ASGI app that answers recorded responses byte for byte.

``bench/run_all.py`` records what our server answers to ``initialize`` and to ``tools/call echo``
(status, headers, body; JSON mode), writes them to the file named by ``BENCH_BARE_RECORDING`` and
serves this app under the same uvicorn options as ours (``tests/support/live_server.py``: uvloop
and httptools when installed, one worker, no access log). The server's CPU per answer here is what
the HTTP server itself costs for the same bytes; ours over this is the figure issue 16 bounds (at most 1.5x).

It does the least a client needs: reads the whole body, answers ``initialize`` with the recorded
initialize response (its ``Mcp-Session-Id`` included), a notification with 202, a DELETE with 204
and anything else with the recorded tools/call response. The JSON-RPC id is not rewritten (the load
generator does not check it), so the bytes are exactly the recorded ones. Not a test, not served
anywhere but the bench.
"""

from __future__ import annotations

import json
import os
from typing import Any

from bench.apps.minimal import lifespan, read_body

Headers = list[tuple[bytes, bytes]]


def _load() -> dict[str, tuple[int, Headers, bytes]]:
    with open(os.environ["BENCH_BARE_RECORDING"], encoding="utf-8") as handle:
        recorded = json.load(handle)
    answers: dict[str, tuple[int, Headers, bytes]] = {}
    for name, item in recorded.items():
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in item["headers"]]
        answers[name] = (int(item["status"]), headers, item["body"].encode("utf-8"))
    return answers


ANSWERS = _load()
EMPTY: Headers = []


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        return await lifespan(receive, send)
    body = await read_body(receive)
    if scope["method"] == "DELETE":
        status, headers, payload = 204, EMPTY, b""
    elif b'"notifications/' in body:
        status, headers, payload = 202, EMPTY, b""
    elif b'"initialize"' in body:
        status, headers, payload = ANSWERS["initialize"]
    elif scope["method"] == "POST":
        status, headers, payload = ANSWERS["call"]
    else:  # the start-up probe's GET
        status, headers, payload = 405, EMPTY, b""
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
