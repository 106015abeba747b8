"""Issue 42 "Show" (items 1-3): a loopback third-party service (an OAuth provider and an API that
checks its tokens, ``tests/support/third_party.py``, its own process), an http tool calling its
API as the user (``http_connection``), and the official SDK client whose elicitation handler
follows the URL with a real HTTP client (and, once, with Debian's chromium through Playwright):
signs in at our server, the provider "signs in" the person (``X-Provider-User``), the callback
stores the token.

First call → URL elicitation → connect → the call completes as that user; two users each see
their own data; a client without URL elicitation gets the link; refresh after expiry; revocation
by the user and by staff (the provider's revocation endpoint is called); and no live token in the
server's log, its trace spans, the audit log, the registry export or the database file.

One server and one third-party process for the module (2025-11-25 sessions, uvicorn, SQLite).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp import types

from tests.support import LiveServer
from tests.support.admin_client import log_in
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.live_server import REGISTRY_PROVIDER
from tests.support.mcp_http import modern_headers, modern_message
from tests.support.otlp import OtlpReceiver
from tests.support.per_user import Person, acting_env
from tests.support.ports import free_port
from tests.support.third_party import CLIENT_ID, CLIENT_SECRET, ThirdParty

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

PEOPLE = {name: f"{name}-password-1" for name in ("alice", "bob", "carol", "dave", "erin", "frank", "grace",
                                                  "heidi")}
STAFF, STAFF_PASSWORD = "root", "root-password-1"
ROWS = """
from django.contrib.auth.models import User
for name, password in {people!r}.items():
    User.objects.create_user(name, password=password)
User.objects.create_superuser({staff!r}, password={staff_password!r})
from connections.models import Provider
from registry.models import Tool
Provider.objects.create(slug="tp", name="Third Party", authorization_url="{tp}/authorize",
    token_url="{tp}/token", revocation_url="{tp}/revoke", scopes="profile", client_id="{client_id}",
    client_secret_env="MCP_TOOL_SECRET_THIRD_PARTY")
Tool.objects.create(name="whoami", kind="http", http_method="GET", http_url="{tp}/api/me",
    http_connection="tp", task_support="forbidden")
"""


@pytest.fixture(scope="module")
def third_party() -> Iterator[ThirdParty]:
    with ThirdParty() as service:
        yield service


@pytest.fixture(scope="module")
def otlp() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def live(third_party: ThirdParty, otlp: OtlpReceiver) -> Iterator[LiveServer]:
    port = free_port()
    env = {
        # Traced to a loopback receiver, so the last test can look for tokens in the spans too.
        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_SERVICE_NAME": "mcpsite-connections-test",
        **acting_env(port),
    }
    rows = ROWS.format(tp=third_party.url(), client_id=CLIENT_ID, people=PEOPLE, staff=STAFF,
                       staff_password=STAFF_PASSWORD)
    server = LiveServer(env=env, port=port, provider=REGISTRY_PROVIDER, load=[["shell", "-c", rows]]).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def alice(live: LiveServer) -> Person:
    return Person(live, "alice")


async def test_first_call_asks_to_connect_and_completes_as_that_user(live: LiveServer, alice: Person) -> None:
    result = await alice.call("whoami")
    assert result.is_error is not True, result
    assert result.structured_content == {"user": "alice-at-tp", "calls": 1}
    [asked] = alice.opened
    assert asked.mode == "url" and asked.elicitation_id  # 2025-11-25: elicitationId is required
    assert asked.url.startswith(f"{live.base_url}/connect/tp/?ref=")
    assert alice.completed == [asked.elicitation_id]  # told the connect page's step is done
    again = await alice.call("whoami")
    assert again.structured_content == {"user": "alice-at-tp", "calls": 2}
    assert len(alice.opened) == 1  # connected: no second elicitation


async def test_the_elicitation_handler_drives_chromium_through_sign_in_and_connect(live: LiveServer) -> None:
    """Issue 42 "Show": the official SDK client's elicitation handler opens the URL in Debian's
    chromium; the person signs in on our page (the same accounts as the authorization server),
    the provider sends the browser back to our callback, the page says connected, and the call
    completes as that person."""
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium (scripts/test.sh installs it)")
    from playwright.async_api import async_playwright

    heidi = Person(live, "heidi")
    seen: list[str] = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                   args=CHROMIUM_ARGS)
        try:
            # The provider's own sign-in is stood in for by a header (tests/support/third_party.py).
            context = await browser.new_context(extra_http_headers={"X-Provider-User": "heidi-at-tp"})
            page = await context.new_page()

            async def in_chromium(context_: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
                assert isinstance(params, types.ElicitRequestURLParams), params
                await page.goto(params.url)
                await page.wait_for_selector("#id_username")  # signed out: our sign-in page first
                await page.fill("#id_username", heidi.name)
                await page.fill("#id_password", heidi.password)
                await page.click("input[type=submit]")
                await page.wait_for_selector("#message")
                seen.append(await page.inner_text("#message"))
                return types.ElicitResult(action="accept")

            heidi.on_elicit = in_chromium  # type: ignore[method-assign]
            result = await heidi.call("whoami")
        finally:
            await browser.close()
    assert result.is_error is not True, result
    assert result.structured_content == {"user": "heidi-at-tp", "calls": 1}
    assert len(seen) == 1 and "is connected" in seen[0], seen
    assert len(heidi.completed) == 1  # notifications/elicitation/complete for that elicitation


async def test_two_users_each_call_with_their_own_account(live: LiveServer, alice: Person) -> None:
    bob = Person(live, "bob")
    assert (await bob.call("whoami")).structured_content["user"] == "bob-at-tp"  # type: ignore[index]
    assert (await alice.call("whoami")).structured_content["user"] == "alice-at-tp"  # type: ignore[index]


async def test_a_client_without_url_elicitation_gets_the_link_and_why(live: LiveServer) -> None:
    carol = Person(live, "carol")
    result = await carol.call("whoami", elicit=False)
    assert result.is_error is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert "have not connected your Third Party account" in text
    assert "does not support URL elicitation" in text
    link = re.search(r"(http://\S+/connect/tp/\?ref=\S+?) to connect", text)
    assert link, text
    page = carol.open(link.group(1))  # the person opens the link by hand
    assert "is connected" in page.text
    again = await carol.call("whoami", elicit=False)
    assert again.structured_content["user"] == "carol-at-tp"  # type: ignore[index]


async def test_stateless_revision_asks_inside_the_input_required_round(live: LiveServer) -> None:
    # 2026-07-28: the URL elicitation is an input request of an input_required result (no
    # elicitationId in that revision); the retry carries the answer and requestState, and the
    # server looks in the vault again (client/elicitation.mdx "URL Mode Elicitation Requests").
    grace = Person(live, "grace")
    capabilities = {"elicitation": {"url": {}}}
    headers = {"Authorization": f"Bearer {grace.token}"}
    async with httpx.AsyncClient(timeout=30.0) as client:
        message = modern_message(1, "tools/call", {"name": "whoami", "arguments": {}}, capabilities)
        sent = await client.post(live.url, json=message, headers={**modern_headers(message), **headers})
        first = sent.json()
        result = first["result"]
        assert result["resultType"] == "input_required", first
        [(key, asked)] = result["inputRequests"].items()
        assert asked["method"] == "elicitation/create" and asked["params"]["mode"] == "url"
        assert "elicitationId" not in asked["params"]
        assert "is connected" in (await anyio.to_thread.run_sync(grace.open, asked["params"]["url"])).text
        retry = modern_message(2, "tools/call", {"name": "whoami", "arguments": {},
                                                 "inputResponses": {key: {"action": "accept"}},
                                                 "requestState": result["requestState"]}, capabilities)
        done = (await client.post(live.url, json=retry, headers={**modern_headers(retry), **headers})).json()
    assert done["result"]["structuredContent"]["user"] == "grace-at-tp", done


async def test_a_token_about_to_expire_is_refreshed_before_use(
    live: LiveServer, third_party: ThirdParty
) -> None:
    # Tokens issued from now live 30 s: inside the vault's refresh margin (60 s), so the first use
    # of erin's fresh token already refreshes it; the API accepts the refreshed one.
    third_party.control("lifetime", seconds=30)
    try:
        before = third_party.stats()["refreshes"]
        erin = Person(live, "erin")
        result = await erin.call("whoami")
        assert result.is_error is not True, result
        assert result.structured_content["user"] == "erin-at-tp"  # type: ignore[index]
        assert third_party.stats()["refreshes"] >= before + 1
    finally:
        third_party.control("lifetime", seconds=3600)


async def test_a_refresh_the_provider_refuses_asks_to_connect_again(
    live: LiveServer, third_party: ThirdParty
) -> None:
    third_party.control("lifetime", seconds=30)
    try:
        frank = Person(live, "frank")
        await frank.call("whoami")
        third_party.control("forget-refresh")  # the provider ends every grant: refresh → invalid_grant
        opened = len(frank.opened)
        result = await frank.call("whoami")
        assert result.structured_content["user"] == "frank-at-tp"  # type: ignore[index]
        assert len(frank.opened) == opened + 1
    finally:
        third_party.control("lifetime", seconds=3600)


async def test_the_user_revokes_on_connected_services_and_is_asked_again(
    live: LiveServer, third_party: ThirdParty
) -> None:
    dave = Person(live, "dave")
    await dave.call("whoami")
    page = dave.open(f"{live.base_url}/connect/services/")
    assert "Third Party" in page.text
    token_id = re.search(r'name="token" value="(\d+)"', page.text).group(1)  # type: ignore[union-attr]
    before = third_party.stats()["revocations"]
    form = {"token": token_id, "csrfmiddlewaretoken": dave.browser.cookies["csrftoken"]}
    done = dave.browser.post(f"{live.base_url}/connect/services/", data=form)
    assert "You have not connected any service" in done.text
    assert third_party.stats()["revocations"] >= before + 1
    opened = len(dave.opened)
    assert (await dave.call("whoami")).structured_content["user"] == "dave-at-tp"  # type: ignore[index]
    assert len(dave.opened) == opened + 1  # asked to connect again


async def test_staff_revoke_in_the_admin(live: LiveServer, alice: Person, third_party: ThirdParty) -> None:
    await alice.call("whoami")
    listing = "/admin/connections/connectedtoken/"
    async with httpx.AsyncClient(base_url=live.base_url, timeout=10.0) as admin:
        await log_in(admin, live.base_url, STAFF, STAFF_PASSWORD)
        page = await admin.get(listing, params={"q": "alice"})
        assert page.status_code == 200
        assert "tp-at-" not in page.text and "tp-rt-" not in page.text  # never shown
        ids = re.findall(r'name="_selected_action" value="(\d+)"', page.text)
        assert len(ids) == 1, page.text[-3000:]
        before = third_party.stats()["revocations"]
        answer = await admin.post(listing, data={"action": "revoke", "_selected_action": ids,
                                                 "csrfmiddlewaretoken": admin.cookies["csrftoken"]})
        assert answer.status_code == 302, answer.text[-2000:]
        assert "Revoked 1 connected account" in (await admin.get(listing)).text
    assert third_party.stats()["revocations"] > before
    opened = len(alice.opened)
    assert (await alice.call("whoami")).structured_content["user"] == "alice-at-tp"  # type: ignore[index]
    assert len(alice.opened) == opened + 1


async def test_no_live_token_is_logged_traced_audited_exported_or_stored_in_clear(
    live: LiveServer, alice: Person, third_party: ThirdParty, otlp: OtlpReceiver
) -> None:
    await alice.call("whoami")
    otlp.wait_for(lambda s: s.name == "GET" and s.attributes.get("server.address") == "127.0.0.1")
    stats = third_party.stats()
    # The users' own access tokens for /mcp too: the transport now keeps the caller's token for the
    # request (a token exchange's subject, issue 42 item 4); it must reach no log, span or row either.
    secrets = [*stats["tokens"], *stats["refresh_tokens"], CLIENT_SECRET, alice.token]
    assert stats["tokens"], "no live token to look for"
    async with httpx.AsyncClient(base_url=live.base_url, timeout=10.0) as staff:
        await log_in(staff, live.base_url, STAFF, STAFF_PASSWORD)
        places = {
            "server log": live.log_text(),
            "audit": (await staff.get("/api/v1/audit/")).text,
            "export": (await staff.get("/api/v1/registry/export")).text,
            "provider API": (await staff.get("/api/v1/providers/")).text,
            # The database file itself: the vault's rows are ciphertext, nothing else holds a token.
            "database": (live.tmpdir / "db.sqlite3").read_bytes().decode("latin-1"),  # type: ignore[operator]
            "spans": repr(otlp.spans),
        }
    assert "whoami" in places["audit"] and "whoami" in places["export"] and '"tp"' in places["provider API"]
    for place, text in places.items():
        for secret in secrets:
            assert secret not in text, f"a live secret is in the {place}"
