"""``MCP_LOG_FORMAT=json`` on a real uvicorn worker: every line it writes to stderr, uvicorn's own
start-up and shutdown lines included, is one JSON object (what a log shipper expects)."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.support import LiveServer

pytestmark = pytest.mark.timeout(60)


def test_every_line_of_a_worker_is_a_json_object() -> None:
    server = LiveServer(
        env={"MCP_LOG_FORMAT": "json", "MCP_LOG_LEVEL": "INFO"},
        migrate=True,
        extra_args=["--log-level", "info"],
    )
    server.start()
    try:
        assert httpx.get(f"{server.base_url}/readyz", timeout=10).status_code == 200
        assert httpx.get(f"{server.base_url}/no-such-page", timeout=10).status_code == 404  # logged
    finally:
        server.stop()
    lines = [line for line in server.last_log.splitlines() if line.strip()]
    parsed = [json.loads(line) for line in lines]  # raises on the first line that is not JSON
    assert all({"time", "level", "logger", "message"} <= set(p) for p in parsed)
    loggers = {p["logger"] for p in parsed}
    assert "uvicorn.error" in loggers, loggers  # uvicorn's "Application startup complete" etc.
    assert any(p["logger"] == "django.request" and "Not Found" in p["message"] for p in parsed)
