"""Dogfood (issue 29 item 6): a running mcpsite imports its own /api/v1/schema/ (fetched with a
management token, piped into ``manage.py import_openapi`` as an operator would), and an MCP client
of that same server then manages the registry through the imported http tools: the tools reach the
server's REST API on loopback with the token from the environment, and what they create is served.
One uvicorn worker on Redis (so the import's change reaches the serving process), raw JSON-RPC."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.live_server import REGISTRY_PROVIDER, LiveServer
from tests.support.mcp_http import open_session, request, session_headers
from tests.support.ports import free_port
from tests.support.shared_redis import REDIS_URL, redis_prefix

TOKEN = "mcpm_" + secrets.token_urlsafe(32)
MAKE_TOKEN = (
    "from django.contrib.auth.models import User; from management_api.tokens import ManagementToken, digest; "
    "u = User.objects.create_superuser('ops', 'ops@example.com', None); "
    f"ManagementToken.objects.create(user=u, name='dogfood', digest=digest({TOKEN!r}), hint={TOKEN[:9]!r})"
)


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    port = free_port()
    with redis_prefix() as prefix:
        env = {
            "REDIS_URL": REDIS_URL,
            "MCP_KEY_PREFIX": prefix,
            "MCP_AUTH": "open",
            "MCP_PROVIDER": REGISTRY_PROVIDER,
            "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1",
            "MCP_TOOL_SECRET_MCPSITE": f"Bearer {TOKEN}",
        }
        with LiveServer(env=env, port=port, load=[["shell", "-c", MAKE_TOKEN]]) as live:
            yield live


async def call(
    client: httpx.AsyncClient, url: str, session: str, n: int, name: str, args: dict[str, Any]
) -> Any:
    answer = await client.post(
        url,
        headers=session_headers(session),
        json=request(n, "tools/call", {"name": name, "arguments": args}),
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_an_mcp_client_manages_the_registry_through_tools_imported_from_mcpsites_own_schema(
    server: LiveServer, tmp_path: Path
) -> None:
    schema = httpx.get(
        f"{server.base_url}/api/v1/schema/",
        timeout=10,
        headers={"Authorization": f"Bearer {TOKEN}", "Accept": "application/vnd.oai.openapi+json"},
    )
    assert schema.status_code == 200
    document = tmp_path / "schema.json"
    document.write_text(schema.text)
    out = server.manage(
        "import_openapi",
        str(document),
        "--source",
        "mcpsite",
        "--prefix",
        "mcpsite.",
        "--base-url",
        server.base_url,
        "--secret-header",
        "Authorization",
        "--secret-env",
        "MCP_TOOL_SECRET_MCPSITE",
    )
    assert "invalid" not in out.split("imported:")[-1], out

    async def scenario() -> tuple[Any, Any, Any]:
        async with httpx.AsyncClient(timeout=20) as client:
            session = await open_session(client, server.url)
            deadline = asyncio.get_running_loop().time() + 15
            while True:  # the import's change reaches the worker through Redis
                listed = await call(client, server.url, session, 1, "mcpsite.tools_list", {"name": "none"})
                if "result" in listed:
                    break
                assert asyncio.get_running_loop().time() < deadline, listed
                await asyncio.sleep(0.1)
            created = await call(
                client,
                server.url,
                session,
                2,
                "mcpsite.tools_create",
                {
                    "name": "made_over_mcp",
                    "kind": "template",
                    "template_text": "Hello {{ who }}",
                    "input_schema": {"type": "object", "properties": {"who": {"type": "string"}}},
                },
            )
            found = await call(
                client, server.url, session, 3, "mcpsite.tools_list", {"name": "made_over_mcp"}
            )
            return listed, created, found

    listed, created, found = asyncio.run(scenario())
    assert listed["result"].get("isError") is not True, listed
    assert "result" in created and created["result"].get("isError") is not True, created
    assert created["result"]["structuredContent"]["name"] == "made_over_mcp"
    results = found["result"]["structuredContent"]["results"]
    assert [r["name"] for r in results] == ["made_over_mcp"], json.dumps(found)[:500]
