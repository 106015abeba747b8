"""Issue 42 item 4, token exchange (RFC 8693), end to end on loopback: our authorization server
issues each user a token for ``/mcp`` (a real sign-in and consent); an http tool whose provider is
of the token exchange kind calls an upstream API as that user, the server exchanging the caller's
own token at its own token endpoint; the API (its own process) verifies the JWT against our JWKS,
checks ``aud`` is its registered resource, and answers the ``sub`` it saw.

Also: the grant in the metadata, two users → two identities, the exchanged token's claims
(``act``, scope, a lifetime within the subject's), an unregistered audience → ``invalid_target``,
an API-key caller → a tool error saying why, a revoked or an expired subject token → refused, and
no live token in the server's log, its spans, the audit rows or the database file.

One server and one API process for the module (2025-11-25 sessions, uvicorn, SQLite).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support import LiveServer
from tests.support.admin_client import log_in
from tests.support.exchange_site import (
    ACCESS,
    EXCHANGER,
    EXCHANGER_SECRET,
    GRANT,
    STAFF,
    STAFF_PASSWORD,
    claims,
    exchange,
    start,
    user_token,
)
from tests.support.jwt_api import JwtApi
from tests.support.manage import ManageSession
from tests.support.otlp import OtlpReceiver
from tests.support.polling import eventually

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


@pytest.fixture(scope="module")
def otlp() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def site(otlp: OtlpReceiver) -> Iterator[tuple[LiveServer, JwtApi]]:
    # Traced to a loopback receiver and logged at DEBUG, so the last test looks for tokens there too.
    server, api = start({"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50",
                         "OTEL_SERVICE_NAME": "mcpsite-exchange-test", "MCP_LOG_LEVEL": "DEBUG"})
    try:
        yield server, api
    finally:
        server.stop()
        api.stop()


@pytest.fixture(scope="module")
def live(site: tuple[LiveServer, JwtApi]) -> LiveServer:
    return site[0]


@pytest.fixture(scope="module")
def api(site: tuple[LiveServer, JwtApi]) -> JwtApi:
    return site[1]


@pytest.fixture(scope="module")
def manage(live: LiveServer) -> Iterator[ManageSession]:
    """The module's management commands against ``live``'s database, in one Django process (one
    start-up, not one per command)."""
    with ManageSession(live.env, inherit=False) as session:
        yield session


@pytest.fixture(scope="module")
def alice(live: LiveServer) -> str:
    return str(user_token(live, "alice")["access_token"])


async def call(live: LiveServer, bearer: str, tool: str = "whoami_api") -> types.CallToolResult:
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=30.0)
    async with client, streamable_http_client(live.url, http_client=client) as (read, write):
        async with ClientSession(read, write) as session:
            with anyio.fail_after(40):
                await session.initialize()
                return await session.call_tool(tool, {})


def text_of(result: types.CallToolResult) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


def test_the_metadata_advertises_token_exchange(live: LiveServer) -> None:
    metadata = httpx.get(f"{live.base_url}/.well-known/oauth-authorization-server", timeout=10.0).json()
    assert GRANT in metadata["grant_types_supported"]


async def test_a_tool_calls_the_api_as_the_user_with_an_exchanged_token(
    live: LiveServer, api: JwtApi, alice: str
) -> None:
    result = await call(live, alice)
    assert result.is_error is not True, text_of(result)
    seen: dict[str, Any] = result.structured_content  # type: ignore[assignment]
    mine = claims(alice)
    # The API verified the signature against our JWKS, the issuer and its own audience.
    assert seen["aud"] == api.resource
    assert seen["sub"] == mine["sub"]
    assert seen["act"] == {"sub": EXCHANGER}  # RFC 8693 §4.1: the server acts for alice
    assert seen["client_id"] == EXCHANGER
    assert seen["scope"] == "mcp"  # what alice consented to ∩ what the target allows
    assert seen["exp"] <= mine["exp"]  # never outlives the subject token


async def test_two_users_are_two_identities_at_the_api(live: LiveServer, alice: str) -> None:
    bob = str(user_token(live, "bob")["access_token"])
    as_bob = (await call(live, bob)).structured_content
    as_alice = (await call(live, alice)).structured_content
    assert as_bob and as_alice
    assert as_bob["sub"] == claims(bob)["sub"] != as_alice["sub"] == claims(alice)["sub"]


def test_the_answer_names_the_issued_token_type_and_caps_the_lifetime(live: LiveServer, api: JwtApi,
                                                                     alice: str) -> None:
    answer = exchange(live, alice, resource=api.resource)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["issued_token_type"] == ACCESS and body["token_type"] == "Bearer"  # RFC 8693 §2.2.1
    assert "refresh_token" not in body
    assert body["scope"] == "mcp"
    assert 0 < body["expires_in"] <= claims(alice)["exp"] - time.time() + 1
    issued = claims(body["access_token"])
    assert issued["aud"] == api.resource and issued["sub"] == claims(alice)["sub"]
    # The audience may also be named by the target's name (RFC 8693 "audience").
    assert exchange(live, alice, audience="api").status_code == 200


def test_an_unregistered_audience_is_invalid_target(live: LiveServer, alice: str) -> None:
    for form in ({"resource": "http://127.0.0.1:9/elsewhere"}, {"audience": "not-registered"},
                 {"resource": f"{live.base_url}/mcp"}):  # our own /mcp is never a target
        answer = exchange(live, alice, **form)
        assert answer.status_code == 400, (form, answer.text)
        assert answer.json()["error"] == "invalid_target", form


def test_no_target_named_is_invalid_request(live: LiveServer, alice: str) -> None:
    answer = exchange(live, alice)
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_request"


async def test_an_api_key_caller_gets_a_tool_error_saying_why(live: LiveServer,
                                                              manage: ManageSession) -> None:
    script = ("from access.models import ApiKey; from django.contrib.auth.models import User; "
              "print(ApiKey.issue('alice key', owner=User.objects.get(username='alice'), tools=['*'])[1])")
    key = manage("shell", "-c", script).strip().splitlines()[-1]
    # The server's key ring learns of a key made in another process by polling its table each
    # second (mcp_protocol/auth/keys.py; a command in a fresh process hid that window behind its
    # exit). Probe: a GET without a session, 401 until the key is known, then 400.
    async with httpx.AsyncClient(timeout=10.0) as probe:
        async def known() -> bool:
            headers = {"accept": "text/event-stream", "authorization": f"Bearer {key}"}
            return (await probe.get(live.url, headers=headers)).status_code != 401

        await eventually(known, seconds=10.0, step=0.05)
    result = await call(live, key)
    assert result.is_error is True
    assert "exchanging your own sign-in token" in text_of(result)
    assert "API key" in text_of(result)


def test_a_revoked_subject_token_is_refused(live: LiveServer, api: JwtApi) -> None:
    got = user_token(live, "carol")
    revoked = httpx.post(f"{live.base_url}/oauth/revoke/", timeout=10.0,
                         data={"token": got["access_token"], "client_id": got["client_id"]})
    assert revoked.status_code == 200, revoked.text
    answer = exchange(live, got["access_token"], resource=api.resource)
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_grant"
    assert got["access_token"] not in answer.text


def test_an_expired_subject_token_is_refused(live: LiveServer, api: JwtApi, manage: ManageSession,
                                             alice: str) -> None:
    # Signed with the server's own key (its database), as alice's, but expired a minute ago.
    mine = claims(alice)
    script = ("import time; from oauth_server.keys import sign; "
              f"c = {mine!r}; c.update(iat=int(time.time()) - 700, exp=int(time.time()) - 60); "
              "print(sign(c))")
    expired = manage("shell", "-c", script).strip().splitlines()[-1]
    answer = exchange(live, expired, resource=api.resource)
    assert answer.status_code == 400
    body = answer.json()
    assert body["error"] == "invalid_grant" and "expired" in body["error_description"]


async def test_no_live_token_is_logged_traced_audited_or_stored(
    live: LiveServer, api: JwtApi, alice: str, otlp: OtlpReceiver
) -> None:
    await call(live, alice)
    otlp.wait_for(lambda s: s.name == "GET" and s.attributes.get("server.address") == "127.0.0.1")
    exchanged = api.tokens()
    assert exchanged, "no exchanged token to look for"
    secrets = [alice, *exchanged, EXCHANGER_SECRET]
    async with httpx.AsyncClient(base_url=live.base_url, timeout=10.0) as staff:
        await log_in(staff, live.base_url, STAFF, STAFF_PASSWORD)
        events = (await staff.get("/admin/oauth_server/oauthevent/")).text
        places = {
            "server log": live.log_text(),
            "audit": (await staff.get("/api/v1/audit/")).text,
            "OAuth events": events,
            "provider API": (await staff.get("/api/v1/providers/")).text,
            "database": (live.tmpdir / "db.sqlite3").read_bytes().decode("latin-1"),  # type: ignore[operator]
            "spans": repr(otlp.spans),
        }
    assert "token exchanged" in events and EXCHANGER in events  # the audit names who
    assert '"token_exchange"' in places["provider API"]
    for place, text in places.items():
        for secret in secrets:
            assert secret not in text, f"a live secret is in the {place}"
