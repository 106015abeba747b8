"""What the built-in authorization server trusts, and for how long (issue 37 items 3 and 7, and
"also found"), against a real server process with real tokens from the real flow:

- a deactivated user, or one whose password changed, keeps nothing: no refresh, no code exchange,
  and the access tokens (JWTs, checked on /mcp without the database) refused on /mcp;
- no code or token in the server's log, with every logger at DEBUG;
- the consent page whatever ``approval_prompt`` the client sends;
- a bound on password guesses at /oauth/login/ and /admin/login/, per account and per address;
- a sign-in without ``next`` lands on a real page;
- an authorization request that can never succeed fails before anyone is asked to sign in.

The server logs at DEBUG for the whole module (the log test reads what every other test did too).
Each test that spends sign-in counts does it from a loopback address of its own (127.0.0.x).
The module's management commands run in one process of its own (``manage``: one Django start-up).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support import LiveServer
from tests.support.live_server import REGISTRY_PROVIDER
from tests.support.manage import ManageSession
from tests.support.mcp_http import POST_HEADERS, initialize_message
from tests.support.oauth_flow import PKCE, OAuthFlow, self_issuing_env, user
from tests.support.polling import wait_until
from tests.support.ports import free_port

REDIRECT = "http://127.0.0.1:9/cb"
PASSWORD = "right-password-1"


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[LiveServer, ManageSession]]:
    port = free_port()
    env = {
        **self_issuing_env(port),
        "MCP_OAUTH_SIGN_IN_RATE": "3/600",
        "MCP_OAUTH_SIGN_IN_ADDRESS_RATE": "5/600",
        "MCP_LOG_LEVEL": "DEBUG",
    }
    server = LiveServer(env=env, port=port, provider=REGISTRY_PROVIDER, load="load_demo").start()
    try:
        with ManageSession(server.env, inherit=False) as session:  # one Django start-up, not nine
            for name in ("alice", "bob", "carol", "dave", "erin", "frank"):
                user(session, name, PASSWORD, staff=name == "frank")
            yield server, session
    finally:
        server.stop()


@pytest.fixture(scope="module")
def live(served: tuple[LiveServer, ManageSession]) -> LiveServer:
    return served[0]


@pytest.fixture(scope="module")
def manage(served: tuple[LiveServer, ManageSession]) -> ManageSession:
    """The module's management commands against ``live``'s database, the users made first."""
    return served[1]


@pytest.fixture
def flows(live: LiveServer) -> Iterator[Any]:
    opened: list[OAuthFlow] = []

    def make(name: str) -> OAuthFlow:
        opened.append(OAuthFlow(live.base_url, name, PASSWORD))
        return opened[-1]

    yield make
    for flow in opened:
        flow.close()


def on_mcp(live: LiveServer, token: str) -> int:
    auth = {"authorization": f"Bearer {token}"}
    response = httpx.post(live.url, json=initialize_message("2025-11-25"), headers={**POST_HEADERS, **auth})
    return response.status_code


def refused_on_mcp(live: LiveServer, token: str) -> None:
    wait_until("the access token refused on /mcp", lambda: on_mcp(live, token) == 401, seconds=10, step=0.25)


def refresh(flow: OAuthFlow, tokens: dict[str, Any]) -> httpx.Response:
    return flow.token(
        grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=tokens["client_id"]
    )


def shell(manage: ManageSession, code: str) -> str:
    return manage("shell", "-c", "from django.contrib.auth.models import User; " + code)


def browser_from(address: str, live: LiveServer) -> httpx.Client:
    """A browser whose requests come from ``address`` (a loopback address of its own)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=live.base_url, transport=transport, timeout=10.0)


def sign_in(browser: httpx.Client, path: str, username: str, password: str) -> httpx.Response:
    browser.get(path)
    form = {"username": username, "password": password, "csrfmiddlewaretoken": browser.cookies["csrftoken"]}
    return browser.post(path, data=form)


# -- a user the server no longer trusts ---------------------------------------------------------


def test_a_deactivated_users_tokens_stop_working_on_mcp_and_cannot_be_refreshed(
    live: LiveServer, manage: ManageSession, flows: Any
) -> None:
    flow = flows("alice")
    first, second = flow.access_token(), flow.access_token()  # two clients
    assert on_mcp(live, first["access_token"]) == 200
    shell(manage, "u = User.objects.get(username='alice'); u.is_active = False; u.save()")
    for tokens in (first, second):
        refused = refresh(flow, tokens)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
        refused_on_mcp(live, tokens["access_token"])  # a JWT with a good signature and exp


def test_a_password_change_ends_every_grant_of_the_user(
    live: LiveServer, manage: ManageSession, flows: Any
) -> None:
    flow = flows("bob")
    tokens = flow.access_token()
    client = flow.register([REDIRECT])
    pkce = PKCE.new()
    code = flow.authorize(client, pkce, REDIRECT).code  # consented, not yet exchanged
    shell(manage, f"u = User.objects.get(username='bob'); u.set_password({'new-' + PASSWORD!r}); u.save()")
    refused = refresh(flow, tokens)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    exchanged = flow.code_grant(client, code, pkce, REDIRECT)
    assert exchanged.status_code == 400 and exchanged.json()["error"] == "invalid_grant"
    refused_on_mcp(live, tokens["access_token"])


def test_a_user_deactivated_without_a_save_signal_still_gets_no_code_exchange_or_refresh(
    manage: ManageSession, flows: Any
) -> None:
    flow = flows("carol")
    tokens = flow.access_token()
    client = flow.register([REDIRECT])
    pkce = PKCE.new()
    code = flow.authorize(client, pkce, REDIRECT).code
    shell(manage, "User.objects.filter(username='carol').update(is_active=False)")  # no signal
    exchanged = flow.code_grant(client, code, pkce, REDIRECT)
    assert exchanged.status_code == 400 and exchanged.json()["error"] == "invalid_grant"
    refused = refresh(flow, tokens)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"


# -- secrets and consent ---------------------------------------------------------------------


def test_no_code_or_token_reaches_the_log_with_every_logger_at_debug(live: LiveServer, flows: Any) -> None:
    flow = flows("dave")
    client = flow.register([REDIRECT])
    pkce = PKCE.new()
    code = flow.authorize(client, pkce, REDIRECT).code
    tokens = {**flow.exchange(client, code, pkce, REDIRECT), "client_id": client}
    refreshed = refresh(flow, tokens)
    assert refreshed.status_code == 200
    secrets = [code, tokens["access_token"], tokens["refresh_token"], *refreshed.json().values()]
    log = live.log_text()
    assert " DEBUG " in log  # the server did log at DEBUG
    leaked = [s for s in secrets if isinstance(s, str) and len(s) > 16 and s in log]
    assert not leaked


def test_the_consent_page_is_shown_even_when_the_client_asks_approval_prompt_auto(flows: Any) -> None:
    flow = flows("erin")
    tokens = flow.access_token()  # a live token: what "auto" would skip the page for
    url = flow.authorize_url(tokens["client_id"], PKCE.new(), REDIRECT, approval_prompt="auto")
    page = flow.consent_page(url)
    assert page.status_code == 200 and 'id="authorizationForm"' in page.text


# -- sign-in -------------------------------------------------------------------------------------


def test_a_sign_in_without_next_lands_on_the_users_clients_page(live: LiveServer) -> None:
    with httpx.Client(base_url=live.base_url, timeout=10.0) as browser:
        signed_in = sign_in(browser, "/oauth/login/", "erin", PASSWORD)
        assert signed_in.status_code == 302 and signed_in.headers["location"] == "/oauth/clients/"
        assert browser.get("/oauth/clients/").status_code == 200


def test_password_guesses_at_one_account_are_refused_with_429_even_with_the_right_password(
    live: LiveServer,
) -> None:
    with browser_from("127.0.0.2", live) as browser:
        for _ in range(3):
            assert sign_in(browser, "/oauth/login/", "Frank", "wrong").status_code == 200  # the form again
        with browser_from("127.0.0.3", live) as elsewhere:  # the account, from another address
            limited = sign_in(elsewhere, "/oauth/login/", "frank", PASSWORD)
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) > 0
        assert "Too many failed sign-ins" in limited.text
        # The admin's sign-in counts the same account.
        assert sign_in(browser, "/admin/login/", "frank", PASSWORD).status_code == 429


def test_password_guesses_from_one_address_are_refused_with_429_on_both_sign_in_pages(
    live: LiveServer,
) -> None:
    with browser_from("127.0.0.4", live) as browser:
        for name in ("nobody-1", "nobody-2", "nobody-3", "nobody-4", "nobody-5"):
            assert sign_in(browser, "/admin/login/", name, "wrong").status_code == 200
        for path in ("/admin/login/", "/oauth/login/"):
            limited = sign_in(browser, path, "alice", PASSWORD)
            assert limited.status_code == 429 and "retry-after" in limited.headers
    with browser_from("127.0.0.5", live) as other:  # another address is not held back
        assert sign_in(other, "/oauth/login/", "erin", PASSWORD).status_code == 302


# -- requests that can never succeed fail before sign-in ---------------------------------------


def test_an_unknown_client_or_unregistered_redirect_is_a_page_before_sign_in_never_a_redirect(
    flows: Any,
) -> None:
    flow = flows("erin")
    client = flow.register([REDIRECT])
    for url in (
        flow.authorize_url("no-such-client", PKCE.new(), REDIRECT),
        flow.authorize_url(client, PKCE.new(), "https://evil.example/cb"),
    ):
        page = flow.browser.get(url)  # not signed in
        assert page.status_code == 400 and "location" not in page.headers  # RFC 6749 §4.1.2.1


@pytest.mark.parametrize("case", ["no PKCE", "plain PKCE", "foreign resource"])
def test_a_request_that_can_never_succeed_redirects_back_with_its_error_before_sign_in(
    flows: Any, case: str
) -> None:
    flow = flows("erin")
    client = flow.register([REDIRECT])
    pkce = None if case == "no PKCE" else PKCE.new()
    kwargs: dict[str, Any] = {"method": "plain"} if case == "plain PKCE" else {}
    if case == "foreign resource":
        flow.resource = "https://other.example/mcp"
    page = flow.browser.get(flow.authorize_url(client, pkce, REDIRECT, state="s-9", **kwargs))
    assert page.status_code == 302 and page.headers["location"].startswith(REDIRECT + "?")
    params = httpx.URL(page.headers["location"]).params
    assert params["error"] == ("invalid_target" if case == "foreign resource" else "invalid_request")
    assert params["state"] == "s-9"


def test_a_good_request_asks_to_sign_in(flows: Any) -> None:
    flow = flows("erin")
    client = flow.register([REDIRECT])
    page = flow.browser.get(flow.authorize_url(client, PKCE.new(), REDIRECT))
    assert page.status_code == 302 and page.headers["location"].startswith("/oauth/login/?next=")
