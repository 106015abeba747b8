"""An upstream MCP server is an outbound target and a source of definitions (issue 40): what an
operator's row or a hostile upstream can and cannot make this server do. Real loopback servers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import override_settings

from registry.models import Tool, Upstream
from registry.upstreams import guard, listing
from registry.upstreams.plan import plan
from registry.upstreams.sync import sync_upstream
from tests.support.sdk_upstream import SdkUpstream
from tests.support.upstream import Upstream as PlainHttp

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def recorder() -> Iterator[PlainHttp]:
    with PlainHttp() as api:
        yield api


def make(url: str, **fields: object) -> Upstream:
    return Upstream.objects.create(name="u", prefix="u", url=url, timeout=3, connect_timeout=2, **fields)


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_a_secret_variable_an_http_tool_may_not_send_is_not_sent(recorder: PlainHttp,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://user:password@db/prod")
    report = sync_upstream(make(f"{recorder.url}/echo/mcp", auth="header", auth_secret_env="DATABASE_URL"))
    assert report.health == "down" and "DATABASE_URL may not be sent" in report.error
    assert recorder.requests == []  # nothing was sent at all


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_an_allowed_secret_variable_is_sent_in_its_header(recorder: PlainHttp,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TOOL_SECRET_UPSTREAM", "s3cret")
    sync_upstream(make(f"{recorder.url}/echo/mcp", auth="header", auth_header="X-Api-Key",
                       auth_secret_env="MCP_TOOL_SECRET_UPSTREAM"))
    assert recorder.requests and recorder.requests[0].headers.get("X-Api-Key") == "s3cret"


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["localhost", "127.0.0.1"], REGISTRY_HTTP_FORBID_PRIVATE=True)
def test_private_addresses_are_refused_by_literal_and_by_name_before_sending(recorder: PlainHttp) -> None:
    literal = sync_upstream(make(f"{recorder.url}/echo/mcp"))
    assert literal.health == "down" and "private address" in literal.error
    row = Upstream.objects.get(name="u")
    row.url = f"http://localhost:{recorder.port}/echo/mcp"
    row.save()
    by_name = sync_upstream(row)
    assert by_name.health == "down" and "resolves only to private addresses" in by_name.error
    assert recorder.requests == []


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_a_token_url_off_the_allow_list_gets_no_client_secret(recorder: PlainHttp,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TOOL_SECRET_CLIENT", "client-secret")
    report = sync_upstream(make(f"{recorder.url}/echo/mcp", auth="client_credentials",
                                oauth_token_url="https://attacker.example/token", oauth_client_id="me",
                                auth_secret_env="MCP_TOOL_SECRET_CLIENT"))
    assert report.health == "down" and "'attacker.example' is not an allowed host" in report.error
    assert recorder.requests == []


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_an_oversized_listing_is_capped_and_prunes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    with SdkUpstream() as up:
        row = make(up.url)
        sync_upstream(row)
        up.server.remove_tool("echo")  # would be marked missing by a complete listing
        monkeypatch.setattr(listing, "MAX_DEFINITIONS", 0)  # every listing is now past the cap
        report = sync_upstream(row)
    assert report.health == "degraded" and not report.missing
    assert any("more than 0 definitions" in line for line in report.detail)
    assert not Tool.objects.filter(upstream=row, upstream_missing=True).exists()


def test_hostile_definitions_are_refused_with_the_reason() -> None:
    row = make("http://127.0.0.1:1/mcp")
    deep: dict[str, object] = {"type": "object"}
    for _ in range(100):
        deep = {"type": "object", "properties": {"x": deep}}
    tools = [
        {"name": "not_object", "inputSchema": {"type": "string"}},
        {"name": "deep", "inputSchema": deep},
        {"name": "odd_dialect", "inputSchema": {"$schema": "https://evil.example/schema", "type": "object"}},
        {"name": "huge", "inputSchema": {"type": "object", "description": "x" * 300_000}},
        {"name": "bad name!", "inputSchema": {"type": "object"}},
        {"inputSchema": {"type": "object"}},
    ]
    report = plan(row, {"tools": tools}, set()).report
    reasons = {r.name: r.reason for r in report.refused}
    assert set(reasons) == {"not_object", "deep", "odd_dialect", "huge", "bad name!", "None"}
    assert "object" in reasons["not_object"] and "deep" in reasons["deep"]
    assert "not a JSON Schema dialect" in reasons["odd_dialect"] and "bytes" in reasons["huge"]
    assert report.added == []


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["localhost"], REGISTRY_HTTP_FORBID_PRIVATE=True)
def test_a_name_is_connected_at_the_address_that_was_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    # Loopback stands in for a public address here: 127.0.0.1 counts as public, ::1 does not. The
    # sync reaches the upstream through "localhost", so it connected to the address the guard kept
    # (PinnedBackend), not to whatever a second lookup would have answered.
    monkeypatch.setattr(guard, "is_public", lambda address: address == "127.0.0.1")
    with SdkUpstream() as up:
        report = sync_upstream(make(up.url.replace("127.0.0.1", "localhost")))
    assert report.health == "up" and "u_echo" in report.added


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_client_credentials_fetch_a_token_once_and_send_it(monkeypatch: pytest.MonkeyPatch) -> None:
    with SdkUpstream(bearer="tok-1") as up:
        base = up.url.removesuffix("/mcp")
        monkeypatch.setenv("MCP_TOOL_SECRET_CLIENT", "secret")
        row = make(up.url, auth="client_credentials", oauth_token_url=f"{base}/token", oauth_client_id="me",
                   oauth_scopes=["read"], auth_secret_env="MCP_TOOL_SECRET_CLIENT")
        assert sync_upstream(row).health == "up" and sync_upstream(row).health == "up"
        assert len(up.token_requests) == 1  # kept until it expires
        assert up.token_requests[0]["scope"] == "read"
        monkeypatch.setenv("MCP_TOOL_SECRET_CLIENT", "wrong")
        row.oauth_client_id = "someone-else"  # another client: another token, refused
        row.save()
        report = sync_upstream(row)
    assert report.health == "down" and "token endpoint refused" in report.error


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_an_upstream_refusing_our_credentials_is_down_and_not_taken_for_an_old_server() -> None:
    with SdkUpstream(bearer="needed") as up:
        report = sync_upstream(make(up.url))
    assert report.health == "down" and "refused our credentials (HTTP 401)" in report.error
