"""What a new user meets on first run, from a real uvicorn process with the demo registry: the
landing page (live counts, the MCP URL, client configurations, links), ``/mcp`` opened in a
browser (a page, while clients are unaffected), the Python SDK snippet the page shows actually
working, and the client configurations ``scripts/serve.sh`` prints."""

from __future__ import annotations

import html
import re
import subprocess
import sys

import httpx
import pytest

from mcpsite.clients import client_configs, python_sdk_snippet
from tests.support import REGISTRY_PROVIDER, live_server_fixture
from tests.support.live_server import ROOT, LiveServer
from tests.support.mcp_http import open_session, session_headers

pytestmark = pytest.mark.timeout(60)
live = live_server_fixture(provider=REGISTRY_PROVIDER, load="load_demo")
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8"


COUNT = re.compile(r'<li data-count="[^"]+"><strong>([^<]+)</strong>([^<]+)</li>')


def counts(page: str) -> dict[str, str]:
    return {name: value for value, name in COUNT.findall(page)}


async def test_the_landing_page_shows_live_counts_the_url_configs_and_links(live: LiveServer) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        first = counts((await client.get(f"{live.base_url}/")).text)
        # The demo registry (registry/fixtures/demo.json): greeting_card and its ui:// view since
        # the apps of issue 27; 11 of its 12 tools served, http_post_example shipped disabled
        # (no host is allowed out of the box, issue 31).
        assert first["tools"] == "11" and first["resources"] == "4" and first["prompts"] == "3"
        # The bundled skills, without load_skills, and the demo's MCP App (issue 37).
        assert first["skills"] == "4" and first["apps"] == "1"
        await open_session(client, live.url)
        response = await client.get(f"{live.base_url}/")
    assert response.status_code == 200
    page = response.text
    now = counts(page)
    assert int(now["live sessions"]) == int(first["live sessions"]) + 1  # live, not cached
    assert now["open streams"] == "0"
    assert f'<code id="mcp-url">{live.url}</code>' in page
    assert 'href="/admin/"' in page and "/static/admin/css/base.css" in page
    assert html.escape(f"claude mcp add --transport http mcpsite {live.url}") in page
    assert "--transport http --method tools/list" in page  # the Inspector's CLI form
    assert "mcp_stdio" in page  # development: the stdio configuration too


async def test_a_browser_opening_mcp_gets_a_page_and_clients_are_unaffected(live: LiveServer) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        page = await client.get(live.url, headers={"accept": BROWSER_ACCEPT})
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert "This is an MCP endpoint" in page.text and 'href="/"' in page.text
        # A client's GET (text/event-stream) without a session is still the JSON-RPC 400.
        bare = await client.get(live.url, headers={"accept": "text/event-stream"})
        assert bare.status_code == 400 and bare.json()["error"]["code"] == -32600
        # And with a session, a stream, even when text/html is listed too.
        session_id = await open_session(client, live.url)
        headers = {**session_headers(session_id), "accept": "text/event-stream, text/html"}
        async with client.stream("GET", live.url, headers=headers) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")


def test_the_python_sdk_snippet_on_the_page_works(live: LiveServer) -> None:
    ran = subprocess.run(
        [sys.executable, "-c", python_sdk_snippet(live.url)], capture_output=True, text=True, timeout=30
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("tools: ") and "echo" in ran.stdout


def test_serve_prints_every_client_configuration() -> None:
    argv = [sys.executable, "-m", "mcpsite.clients", "http://127.0.0.1:8000/mcp"]
    printed = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=30, check=True).stdout
    for config in client_configs("http://127.0.0.1:8000/mcp"):
        assert f"--- {config.client}" in printed and config.text.strip() in printed
    assert str(ROOT / "manage.py") in printed  # the stdio config names this checkout
    assert "mcpsite.clients" in (ROOT / "scripts" / "serve.sh").read_text()
