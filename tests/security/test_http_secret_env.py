"""Issue 24 item 3: an http tool cannot send a server secret upstream.

A tool's ``http_secret_env`` may name only a variable with a configured prefix (default
``MCP_TOOL_SECRET_``) or on the allow-list: ``SECRET_KEY`` or ``DATABASE_URL`` is refused when the
tool is saved (REST API, admin), and a row forced into the database with such a name sends nothing
at call time: a real server process calls a loopback upstream that echoes the headers it got.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from tests.support.live_server import LiveServer
from tests.support.mcp_http import POST_HEADERS, initialize_message, notification, request, session_headers

SERVER_SECRET_KEY = "server-secret-key-that-must-never-leave-" + "k" * 20
TOOL_SECRET = "the-upstream-api-key-the-tool-may-send"

HTTP_TOOL: dict[str, Any] = {
    "kind": "http",
    "description": "POSTs to an upstream",
    "input_schema": {"type": "object", "properties": {}},
    "http_url": "http://127.0.0.1:9/echo",
    "http_secret_header": "X-Upstream-Key",
}


@pytest.fixture(autouse=True)
def allow_loopback(settings: Any) -> None:
    """The tools here call 127.0.0.1: an enabled http tool's host must be allowed when saved."""
    settings.REGISTRY_HTTP_ALLOWED_HOSTS = ["127.0.0.1"]


# -- at save ------------------------------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("variable", ["SECRET_KEY", "DATABASE_URL", "REDIS_URL", "MCP_REQUEST_STATE_KEYS"])
def test_the_rest_api_refuses_a_tool_naming_a_server_variable(variable: str) -> None:
    client = APIClient()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    response = client.post(
        "/api/v1/tools/", {**HTTP_TOOL, "name": "leaky", "http_secret_env": variable}, format="json"
    )
    assert response.status_code == 400, response.content
    error = " ".join(response.json()["http_secret_env"])
    assert variable in error and "MCP_TOOL_SECRET_" in error  # names the rule
    allowed = {**HTTP_TOOL, "name": "fine", "http_secret_env": "MCP_TOOL_SECRET_UPSTREAM"}
    assert client.post("/api/v1/tools/", allowed, format="json").status_code == 201


@pytest.mark.django_db
def test_the_admin_refuses_a_tool_naming_a_server_variable(admin_client: Client) -> None:
    form = {
        "name": "leaky",
        "description": "",
        "title": "",
        "enabled": "on",
        "kind": "http",
        "input_schema": json.dumps(HTTP_TOOL["input_schema"]),
        "output_schema": "",
        "handler": "",
        "template_text": "",
        "template_structured": "",
        "http_url": HTTP_TOOL["http_url"],
        "http_timeout": "10",
        "http_secret_header": "X-Upstream-Key",
        "http_secret_env": "SECRET_KEY",
        "annotations": "",
        "icons": "[]",
        "meta": "{}",
        "tags": "[]",
        "execution": "",
    }
    response = admin_client.post("/admin/registry/tool/add/", form)
    assert response.status_code == 200  # the form again, not a redirect to the saved tool
    errors = response.context["adminform"].form.errors
    assert "SECRET_KEY" in errors["http_secret_env"][0] and "MCP_TOOL_SECRET_" in errors["http_secret_env"][0]


@pytest.mark.django_db
def test_the_allow_list_admits_a_named_variable(settings: Any) -> None:
    from registry.models import Tool

    settings.REGISTRY_HTTP_SECRET_ENV_ALLOWED = ["UPSTREAM_TOKEN"]
    fields = dict(HTTP_TOOL)
    Tool(name="listed", http_secret_env="UPSTREAM_TOKEN", **fields).full_clean()
    settings.REGISTRY_HTTP_SECRET_ENV_PREFIXES = ["ACME_"]
    Tool(name="prefixed", http_secret_env="ACME_KEY", **fields).full_clean()


# -- at call time, against a real server --------------------------------------------------------
class Echo(BaseHTTPRequestHandler):
    """Answers every POST with the headers it received, as a careless upstream might."""

    received: list[dict[str, str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = dict(self.headers.items())
        Echo.received.append(headers)
        reply = json.dumps({"headers": headers}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/echo"
    server.shutdown()
    server.server_close()
    thread.join(5)


# Rows written straight to the table (no full_clean), as a raw SQL write or an older release would.
FORCE_ROWS = """
from registry.models import Tool
for name, variable in {rows!r}:
    Tool.objects.create(name=name, kind="http", http_url={url!r}, http_secret_header="X-Upstream-Key",
                        http_secret_env=variable, input_schema={{"type": "object", "properties": {{}}}})
"""


@pytest.fixture(scope="module")
def live(upstream: str) -> Iterator[LiveServer]:
    rows = [
        ("sends_secret_key", "SECRET_KEY"),
        ("sends_database_url", "DATABASE_URL"),
        ("sends_its_own", "MCP_TOOL_SECRET_UPSTREAM"),
    ]
    server = LiveServer(
        env={
            "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1",
            "SECRET_KEY": SERVER_SECRET_KEY,
            "MCP_TOOL_SECRET_UPSTREAM": TOOL_SECRET,
        },
        provider="registry.provider.RegistryProvider",
        load=[["shell", "-c", FORCE_ROWS.format(rows=rows, url=upstream)]],  # before the server starts
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def call_tool(live: LiveServer, name: str) -> dict[str, Any]:
    with httpx.Client(timeout=30) as client:
        opened = client.post(live.url, headers=POST_HEADERS, json=initialize_message())
        session = opened.headers["mcp-session-id"]
        initialized = notification("notifications/initialized")
        client.post(live.url, headers=session_headers(session), json=initialized)
        answer = client.post(
            live.url,
            headers=session_headers(session),
            json=request(1, "tools/call", {"name": name, "arguments": {}}),
        )
    assert answer.status_code == 200, answer.text
    text = answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        text = next(
            line[5:]
            for line in text.splitlines()
            if line.startswith("data:") and '"id":1' in line.replace(" ", "")
        )
    assert "result" in json.loads(text), text
    result: dict[str, Any] = json.loads(text)["result"]
    return result


@pytest.mark.parametrize("tool", ["sends_secret_key", "sends_database_url"])
def test_a_forced_row_naming_a_server_variable_sends_nothing(live: LiveServer, tool: str) -> None:
    Echo.received.clear()
    result = call_tool(live, tool)
    assert result["isError"] is True
    assert "cannot be sent" in result["content"][0]["text"]
    assert Echo.received == []  # the upstream was not called at all
    database_url = live.env["DATABASE_URL"]
    for value in (SERVER_SECRET_KEY, database_url):
        assert value not in json.dumps(result)
        assert value not in live.log_text()
    assert tool in live.log_text()  # the refusal is logged, without the value


def test_a_variable_the_rule_allows_is_sent(live: LiveServer) -> None:
    Echo.received.clear()
    result = call_tool(live, "sends_its_own")
    assert not result.get("isError"), result
    assert Echo.received[0]["X-Upstream-Key"] == TOOL_SECRET


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["Authorization", "proxy-authorization", "Cookie", "X-Api-Key",
                                  "X-Auth-Token",
                                  "X-Client-Secret", "Private-Token"])
def test_a_credential_looking_static_header_is_refused_pointing_at_the_secret_header(name: str) -> None:
    # Issue 37 item 7: a static header shows in views, history and exports.
    from django.core.exceptions import ValidationError

    from registry.models import Tool

    tool = Tool(name="leaky", kind="http", description="d", http_url="https://api.example.com/x",
                http_headers={name: "Bearer abc"}, enabled=False)
    with pytest.raises(ValidationError) as info:
        tool.full_clean()
    message = info.value.message_dict["http_headers"][0]
    assert "looks like a credential" in message and "http_secret_env" in message


@pytest.mark.django_db
def test_ordinary_static_headers_are_kept() -> None:
    from registry.models import Tool

    Tool(name="plain", kind="http", description="d", http_url="https://api.example.com/x", enabled=False,
         http_headers={"Accept-Language": "en", "X-Team": "core", "X-Idempotency-Key": "k"}).full_clean()
