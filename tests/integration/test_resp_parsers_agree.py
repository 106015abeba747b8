"""Both RESP reply parsers of ``redis_client/resp.py`` against a real Redis: hiredis (installed with the
project) and the pure-Python one that serves where hiredis is absent. The other suites only ever run
the first, so this keeps the second honest: plain replies, a MULTI/EXEC group, error replies top
level and inside a group."""

from __future__ import annotations

import uuid

import pytest
import redis

from mcp_protocol.redis_client import resp
from mcp_protocol.redis_client.pipelined import PipelinedRedis

URL = "redis://127.0.0.1:6379/0"


@pytest.fixture(params=["hiredis", "python"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(resp, "hiredis", None)
    elif resp.hiredis is None:
        pytest.skip("hiredis is not installed")
    return str(request.param)


async def test_replies_groups_and_errors_parse_alike(parser: str) -> None:
    client = PipelinedRedis(URL)
    key = f"mcpsite-test-resp:{uuid.uuid4().hex}"
    try:
        conn = await client.open()
        assert (conn.reader is None) == (parser == "python")
        assert await client.execute("SET", key, "v\r\nwith a break", key=key) == "OK"
        assert await client.execute("GET", key, key=key) == "v\r\nwith a break"
        replies = await client.pipeline([("MULTI",), ("INCR", f"{key}:n"), ("LPUSH", key, "x"),
                                         ("INCR", f"{key}:n"), ("EXEC",)])
        assert replies[:4] == ["OK", "QUEUED", "QUEUED", "QUEUED"]
        one, wrong_type, two = replies[4]
        assert (one, two) == (1, 2)
        assert isinstance(wrong_type, redis.exceptions.ResponseError)
        assert "WRONGTYPE" in str(wrong_type)
        with pytest.raises(redis.exceptions.ResponseError, match="unknown command"):
            await client.execute("NOSUCHCOMMAND", key=key)
        assert await client.execute("DEL", key, f"{key}:n", key=key) == 2
    finally:
        client.close()
