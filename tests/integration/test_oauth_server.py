"""The built-in authorization server (``oauth_server``, ``MCP_OAUTH_ISSUER=self``) against a real
server process, driven over HTTP like a browser and a client would (``tests/support/oauth_flow.py``):
discovery, the whole code flow with PKCE to a token ``/mcp`` accepts, and every refusal with the
error its RFC names. One server for the module; the CIMD cases have their own (``test_oauth_cimd``).
The module's management commands run in one process of its own (``manage``: one Django start-up,
not one per command).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from tests.support import LiveServer
from tests.support.cimd_host import DocumentHost
from tests.support.live_server import REGISTRY_PROVIDER
from tests.support.manage import ManageSession
from tests.support.mcp_http import POST_HEADERS, initialize_message, request, session_headers
from tests.support.oauth_flow import PKCE, OAuthFlow, self_issuing_env, user
from tests.support.polling import wait_until
from tests.support.ports import free_port

REDIRECT = "http://127.0.0.1:9/cb"
SCOPES = {"mcp": {}, "mcp:echo": {"tools": ["echo"]}}


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    port = free_port()
    env = {
        # It asks for many tokens and registers many clients from one address: the helper's rates.
        **self_issuing_env(port, SCOPES),
        # A rotated key signs at once and /mcp refetches the JWKS soon: the rotation test is short.
        "MCP_OAUTH_KEY_PUBLISH_SECONDS": "0",
        "MCP_OAUTH_JWKS_MIN_REFRESH": "0.2",
    }
    server = LiveServer(env=env, port=port, provider=REGISTRY_PROVIDER, load="load_demo").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def manage(live: LiveServer) -> Iterator[ManageSession]:
    """The module's management commands against ``live``'s database, alice made first."""
    with ManageSession(live.env, inherit=False) as session:
        user(session, "alice", "alice-password-1")
        yield session


@pytest.fixture
def flow(live: LiveServer, manage: ManageSession) -> Iterator[OAuthFlow]:
    flow = OAuthFlow(live.base_url, "alice", "alice-password-1")
    yield flow
    flow.close()


def mcp(live: LiveServer, token: str, *messages: dict[str, Any]) -> list[httpx.Response]:
    """initialize, then ``messages`` in that session; every response."""
    auth = {"authorization": f"Bearer {token}"}
    first = httpx.post(live.url, json=initialize_message("2025-11-25"), headers={**POST_HEADERS, **auth})
    responses = [first]
    if first.status_code != 200:
        return responses
    headers = {**session_headers(first.headers["mcp-session-id"]), **auth}
    for message in messages:
        responses.append(httpx.post(live.url, json=message, headers=headers))
    return responses


def refused_on_mcp(live: LiveServer, token: str) -> None:
    """``token`` is refused on /mcp (401 invalid_token) within the workers' revocation poll."""
    wait_until(
        "the revoked grant's access token refused on /mcp",
        lambda: mcp(live, token)[0].status_code == 401,
        seconds=10,
        step=0.25,
    )


def test_the_metadata_advertises_what_mcp_clients_need(live: LiveServer) -> None:
    issuer = live.base_url.rstrip("/")
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        meta = httpx.get(live.base_url + path).json()
        assert meta["issuer"] == issuer
        assert meta["code_challenge_methods_supported"] == ["S256"]
        assert "none" in meta["token_endpoint_auth_methods_supported"]
        assert meta["authorization_response_iss_parameter_supported"] is True
        assert meta["client_id_metadata_document_supported"] is True
        assert meta["registration_endpoint"] == f"{issuer}/oauth/register/"
        assert meta["response_types_supported"] == ["code"]
        assert set(meta["grant_types_supported"]) == {"authorization_code", "refresh_token"}
        assert sorted(meta["scopes_supported"]) == sorted(SCOPES)
    resource = httpx.get(live.base_url + "/.well-known/oauth-protected-resource/mcp").json()
    assert resource["authorization_servers"] == [issuer]
    assert httpx.get(live.base_url + "/.well-known/jwks.json").json()["keys"][0]["alg"] == "ES256"


def test_the_code_flow_ends_in_a_token_mcp_accepts(live: LiveServer, flow: OAuthFlow) -> None:
    client = flow.register([REDIRECT])
    pkce = PKCE.new()
    redirect = flow.authorize(client, pkce, REDIRECT, state="xyz")
    assert redirect.params["state"] == "xyz"
    assert redirect.params["iss"] == live.base_url.rstrip("/")  # RFC 9207
    tokens = flow.exchange(client, redirect.code, pkce, REDIRECT)
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["aud"] == live.url and claims["iss"] == live.base_url.rstrip("/")
    assert jwt.get_unverified_header(tokens["access_token"])["typ"] == "at+jwt"
    init, listed, called = mcp(
        live,
        tokens["access_token"],
        request(1, "tools/list"),
        request(2, "tools/call", {"name": "echo", "arguments": {"message": "hi"}}),
    )
    assert init.status_code == 200
    assert "echo" in {t["name"] for t in listed.json()["result"]["tools"]}
    assert called.json()["result"]["content"][0]["text"] == "hi"
    # The refresh token is opaque: never an access token.
    assert mcp(live, tokens["refresh_token"])[0].status_code == 401


def test_the_consent_page_names_the_client_its_logo_redirect_host_and_the_scopes_in_words(
    flow: OAuthFlow,
) -> None:
    client = flow.register(
        ["http://127.0.0.1:9/cb"],
        client_name="Inspector of Things",
        logo_uri="https://cdn.example/inspector.png",
        client_uri="https://inspector.example/",
    )
    page = flow.consent_page(flow.authorize_url(client, PKCE.new(), REDIRECT, scope="mcp:echo"))
    assert page.status_code == 200
    assert (
        "Inspector of Things" in page.text and '<strong class="redirect-host">127.0.0.1</strong>' in page.text
    )
    assert (
        'src="https://cdn.example/inspector.png"' in page.text and "https://inspector.example/" in page.text
    )
    assert "Use the tools echo" in page.text
    assert 'id="header"' in page.text  # the admin's look
    plain = flow.register([REDIRECT], logo_uri="http://cdn.example/x.png")  # only https is shown
    assert "cdn.example/x.png" not in flow.consent_page(flow.authorize_url(plain, PKCE.new(), REDIRECT)).text


def test_a_narrower_scope_sees_only_its_tools_and_steps_up_with_every_scope_needed(
    live: LiveServer, flow: OAuthFlow
) -> None:
    tokens = flow.access_token(scope="mcp:echo")
    _, listed, other, unknown = mcp(
        live,
        tokens["access_token"],
        request(1, "tools/list"),
        request(2, "tools/call", {"name": "greet", "arguments": {"name": "x"}}),
        request(3, "tools/call", {"name": "no_such_tool", "arguments": {}}),
    )
    assert [t["name"] for t in listed.json()["result"]["tools"]] == ["echo"]
    # 2026-07-28 "Scope Challenge Handling": 403, every scope needed in one challenge: the token's
    # own and the narrowest that grants greet.
    assert other.status_code == 403
    challenge = other.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="mcp:echo mcp"' in challenge
    assert "resource_metadata=" in challenge
    # A tool no scope grants is as unknown as before: no step-up, the core's error.
    assert unknown.status_code == 200 and "error" in unknown.json()


def test_loopback_redirects_match_any_port(flow: OAuthFlow) -> None:
    client = flow.register(["http://127.0.0.1/callback"])
    pkce = PKCE.new()
    redirect = flow.authorize(client, pkce, "http://127.0.0.1:53682/callback")  # RFC 8252 §7.3
    assert redirect.location.startswith("http://127.0.0.1:53682/callback?")
    assert flow.exchange(client, redirect.code, pkce, "http://127.0.0.1:53682/callback")["access_token"]


def test_a_redirect_uri_not_registered_is_refused_without_a_redirect(flow: OAuthFlow) -> None:
    client = flow.register([REDIRECT])
    page = flow.consent_page(flow.authorize_url(client, PKCE.new(), "https://evil.example/cb"))
    assert page.status_code == 400 and "location" not in page.headers  # RFC 6749 §4.1.2.1
    assert "invalid_request" in page.text or "Mismatching redirect URI" in page.text


@pytest.mark.parametrize("method", [None, "plain"])
def test_pkce_missing_or_plain_is_refused(flow: OAuthFlow, method: str | None) -> None:
    client = flow.register([REDIRECT])
    pkce = None if method is None else PKCE.new()
    page = flow.consent_page(flow.authorize_url(client, pkce, REDIRECT, method=method))
    assert page.status_code == 302
    params = httpx.URL(page.headers["location"]).params
    assert params["error"] == "invalid_request"  # RFC 7636 §4.4.1


def test_a_code_used_twice_is_refused_and_its_tokens_revoked(live: LiveServer, flow: OAuthFlow) -> None:
    client = flow.register([REDIRECT])
    pkce = PKCE.new()
    code = flow.authorize(client, pkce, REDIRECT).code
    tokens = flow.exchange(client, code, pkce, REDIRECT)
    assert mcp(live, tokens["access_token"])[0].status_code == 200  # good until the reuse
    again = flow.code_grant(client, code, pkce, REDIRECT)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    refreshed = flow.token(
        grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client
    )
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    refused_on_mcp(live, tokens["access_token"])  # the JWT too, though its signature is good


def test_an_expired_code_is_refused(manage: ManageSession, flow: OAuthFlow) -> None:
    client = flow.register([REDIRECT])
    pkce = PKCE.new()
    code = flow.authorize(client, pkce, REDIRECT).code
    manage(
        "shell",
        "-c",
        (  # the code's 60 s, passed: its row says so
            "from oauth2_provider.models import Grant; from django.utils import timezone; "
            f"Grant.objects.filter(code={code!r}).update(expires=timezone.now())"
        ),
    )
    response = flow.code_grant(client, code, pkce, REDIRECT)
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"


def test_a_wrong_code_verifier_is_refused(flow: OAuthFlow) -> None:
    client = flow.register([REDIRECT])
    code = flow.authorize(client, PKCE.new(), REDIRECT).code
    response = flow.token(
        grant_type="authorization_code",
        code=code,
        client_id=client,
        redirect_uri=REDIRECT,
        code_verifier=PKCE.new().verifier,
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"


def test_a_resource_of_another_server_is_refused_with_invalid_target(flow: OAuthFlow) -> None:
    client = flow.register([REDIRECT])
    pkce = PKCE.new()
    other = OAuthFlow(flow.base_url, "alice", "alice-password-1", resource="https://other.example/mcp")
    other.browser = flow.browser
    refused = other.authorize(client, pkce, REDIRECT)  # at the authorization endpoint (RFC 8707 §2)
    assert refused.params["error"] == "invalid_target"
    code = flow.authorize(client, pkce, REDIRECT).code
    response = other.token(  # and at the token endpoint, a resource the token request names
        grant_type="authorization_code",
        code=code,
        client_id=client,
        redirect_uri=REDIRECT,
        code_verifier=pkce.verifier,
        resource="https://other.example/mcp",
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_target"  # RFC 8707 §2


def test_a_token_for_another_audience_is_refused_on_mcp(live: LiveServer, manage: ManageSession) -> None:
    token = manage(
        "shell",
        "-c",
        (  # signed with this server's own key, for another resource
            "import time; from oauth_server.keys import sign; from mcp_django.conf import access_settings; "
            "print(sign({'iss': access_settings()['OAUTH_ISSUER'], 'sub': '1', "
            "'aud': 'https://other.example/mcp', "
            "'scope': 'mcp', 'exp': int(time.time()) + 60}))"
        ),
    ).split()[-1]
    refused = mcp(live, token)[0]
    assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]


def test_a_refresh_token_reused_after_rotation_ends_its_family(live: LiveServer, flow: OAuthFlow) -> None:
    tokens = flow.access_token()
    client = tokens["client_id"]
    rotated = flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client)
    assert rotated.status_code == 200
    newest = rotated.json()["refresh_token"]
    assert newest != tokens["refresh_token"]
    reused = flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client)
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    # Reuse detection (OAuth 2.1 §4.3.1): the thief's use ends the legitimate client's token too.
    after = flow.token(grant_type="refresh_token", refresh_token=newest, client_id=client)
    assert after.status_code == 400 and after.json()["error"] == "invalid_grant"
    refused_on_mcp(live, rotated.json()["access_token"])


def test_revocation_ends_the_refresh_token_and_its_access_token(live: LiveServer, flow: OAuthFlow) -> None:
    tokens = flow.access_token()
    client = tokens["client_id"]
    assert mcp(live, tokens["access_token"])[0].status_code == 200
    revoked = httpx.post(
        f"{flow.base_url}/oauth/revoke/",
        data={"token": tokens["refresh_token"], "token_type_hint": "refresh_token", "client_id": client},
    )
    assert revoked.status_code == 200  # RFC 7009 §2.2
    refreshed = flow.token(
        grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client
    )
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    refused_on_mcp(live, tokens["access_token"])


def test_every_step_leaves_an_audit_row(manage: ManageSession, flow: OAuthFlow) -> None:
    flow.access_token()
    kinds = manage(
        "shell",
        "-c",
        (
            "from oauth_server.models import OAuthEvent; "
            "print(' '.join(sorted(set(OAuthEvent.objects.values_list('kind', flat=True)))))"
        ),
    ).split()
    assert {"authorized", "token"} <= set(kinds)


def test_a_metadata_document_on_a_private_address_is_never_fetched(
    live: LiveServer, flow: OAuthFlow, tmp_path: Path
) -> None:
    host = DocumentHost(tmp_path).start()
    try:
        client = host.url("/client.json")
        host.documents["/client.json"] = {"client_id": client, "redirect_uris": [REDIRECT]}
        page = flow.consent_page(flow.authorize_url(client, PKCE.new(), REDIRECT))
        assert page.status_code == 400 and "location" not in page.headers  # an unknown client
        assert host.hits["/client.json"] == 0  # SSRF: refused before any connection
        assert "127.0.0.1 is a private address" in live.log_text()  # mcp_django.outbound refused it
    finally:
        host.stop()


def test_users_see_and_revoke_the_clients_they_authorized(live: LiveServer, flow: OAuthFlow) -> None:
    client = flow.register([REDIRECT], client_name="Revocable Client")
    pkce = PKCE.new()
    tokens = flow.exchange(
        client, flow.authorize(client, pkce, REDIRECT, scope="mcp:echo").code, pkce, REDIRECT
    )
    page = flow.browser.get("/oauth/clients/")
    assert page.status_code == 200 and "Revocable Client" in page.text and "mcp:echo" in page.text
    row = page.text[page.text.index("Revocable Client") :]
    application = row[row.index('name="application" value="') :].split('"')[3]
    revoked = flow.browser.post(
        "/oauth/clients/",
        data={"application": application, "csrfmiddlewaretoken": flow.browser.cookies["csrftoken"]},
    )
    assert revoked.status_code == 302
    assert "Revocable Client" not in flow.browser.get("/oauth/clients/").text
    refreshed = flow.token(
        grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client
    )
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    refused_on_mcp(live, tokens["access_token"])


def test_the_landing_page_shows_the_connector_url(live: LiveServer) -> None:
    page = httpx.get(live.base_url + "/")
    assert f'<code id="connector-url">{live.url}</code>' in page.text
    assert 'href="/oauth/clients/"' in page.text


def test_a_rotated_key_signs_new_tokens_while_old_ones_keep_working(
    live: LiveServer, manage: ManageSession, flow: OAuthFlow
) -> None:
    old = flow.access_token()["access_token"]
    out = manage("oauth_keys", "rotate")
    assert "BEGIN" not in out and "new signing key" in out  # ids only, never key material
    kid = out.split()[-2]

    def published() -> bool:  # each worker re-reads its key table every 5 s (oauth_server/keys.py)
        return kid in {k["kid"] for k in httpx.get(live.base_url + "/.well-known/jwks.json").json()["keys"]}

    wait_until("the new key in the JWKS", published, seconds=10, step=0.5)
    newer: list[str] = []

    def signed_with_the_new_key() -> bool:  # the server re-reads its key table every 5 s
        newer.append(flow.access_token()["access_token"])
        return jwt.get_unverified_header(newer[-1])["kid"] == kid

    wait_until("a token signed with the new key", signed_with_the_new_key, seconds=15, step=1.0)
    assert mcp(live, newer[-1])[0].status_code == 200
    assert mcp(live, old)[0].status_code == 200  # the old key is still published
    listed = manage("oauth_keys", "list")
    assert f"{kid}" in listed and "retiring" in listed
