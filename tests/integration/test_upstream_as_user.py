"""Issue 42 item 3 / issue 40 item 4 "per user": an upstream MCP server called as the user, end to
end on loopback (``tests/support/per_user.py``): the third party's OAuth provider and API, an
official-SDK upstream that checks each request's token there (401 when it is refused), mcpsite
with the upstream ``mine`` (``auth`` "user", provider ``tp``), and the official SDK client whose
elicitation handler connects the user in a real HTTP "browser".

First call → URL elicitation → connect → the call completes as that user; two users each see
their own identity over two different upstream sessions (``Mcp-Session-Id``), and one user keeps
the same session between calls (and, for ``resources/read`` and ``prompts/get`` of the same
mirrored resource and prompt, each user their own answer); a client without URL elicitation gets
the link; the 2026-07-28 input-required round; the per-user pool's bound (least recently used
closed first); a token the upstream refuses is refreshed by the vault without asking, or, when
the provider refuses the refresh too, the user is asked to connect again; the same for an http
tool's 401. A 403 is not a 401 (RFC 6750 §3.1): the token is kept, the call is an error with the
service's reason (an ``insufficient_scope`` challenge beyond the operator's scopes names the
scope; one within them has the user connect again for it, then the call runs once more), and
once the service allows it again the next call runs with the same token, nobody asked to connect.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.mcp_http import modern_headers, modern_message
from tests.support.per_user import Person, PerUserStack

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]
CAP = 3  # REGISTRY_UPSTREAM_USER_SESSIONS for this server: the bound is reached within the module


@pytest.fixture(scope="module")
def stack() -> Iterator[PerUserStack]:
    with PerUserStack(env={"REGISTRY_UPSTREAM_USER_SESSIONS": str(CAP)}) as running:
        yield running


@pytest.fixture(scope="module")
def alice(stack: PerUserStack) -> Person:
    return Person(stack, "alice")


def _who(result: Any) -> dict[str, Any]:
    assert result.is_error is not True, result
    found: dict[str, Any] = result.structured_content
    return found


async def _seen(person: Person) -> dict[str, Any]:
    return _who(await person.call("mine_seen"))


async def test_first_call_asks_to_connect_then_runs_as_that_user(stack: PerUserStack, alice: Person) -> None:
    first = _who(await alice.call())
    assert first["user"] == "alice-at-tp" and first["session"]
    [asked] = alice.opened
    assert asked.mode == "url" and asked.elicitation_id  # 2025-11-25: elicitationId required
    assert "Upstream 'mine' calls Third Party as you" in asked.message
    assert asked.url.startswith(f"{stack.live.base_url}/connect/tp/?ref=")  # type: ignore[union-attr]
    again = _who(await alice.call())  # a new MCP session of ours: the same pooled upstream session
    assert again == first and len(alice.opened) == 1


async def test_two_users_see_themselves_over_two_upstream_sessions(
    stack: PerUserStack, alice: Person
) -> None:
    bob = Person(stack, "bob")
    theirs = _who(await bob.call())
    mine = _who(await alice.call())
    assert theirs["user"] == "bob-at-tp" and mine["user"] == "alice-at-tp"
    assert theirs["session"] != mine["session"]
    sessions = (await _seen(alice))["sessions"]
    assert sessions[mine["session"]] == ["alice-at-tp"] and sessions[theirs["session"]] == ["bob-at-tp"]


async def test_two_users_reading_the_same_resource_each_read_their_own(
    stack: PerUserStack, alice: Person
) -> None:
    bob = Person(stack, "bob")
    found: dict[str, dict[str, Any]] = {}
    for person in (alice, bob):
        _who(await person.call())  # connected (asked once if not yet): a read cannot elicit
        async with person.session() as session:
            with anyio.fail_after(40):
                read = await session.read_resource("user://me/identity")
        [content] = read.contents
        found[person.name] = json.loads(content.text)  # type: ignore[union-attr]
    assert found["alice"]["user"] == "alice-at-tp", f"alice reads her own: {found}"
    assert found["bob"]["user"] == "bob-at-tp", f"bob reads his own: {found}"
    assert found["alice"]["session"] != found["bob"]["session"], "each read went over its user's session"


async def test_two_users_getting_the_same_prompt_each_get_their_own(
    stack: PerUserStack, alice: Person
) -> None:
    bob = Person(stack, "bob")
    said: dict[str, str] = {}
    for person in (alice, bob):
        _who(await person.call())
        async with person.session() as session:
            with anyio.fail_after(40):
                prompt = await session.get_prompt("mine_greeting", {})
        [message] = prompt.messages
        said[person.name] = message.content.text  # type: ignore[union-attr]
    assert said["alice"].startswith("Hello alice-at-tp, on session "), f"alice's own: {said}"
    assert said["bob"].startswith("Hello bob-at-tp, on session "), f"bob's own: {said}"
    assert said["alice"].split()[-1] != said["bob"].split()[-1], "each over its user's session"


async def test_a_client_without_url_elicitation_gets_the_link(stack: PerUserStack) -> None:
    carol = Person(stack, "carol")
    result = await carol.call(elicit=False)
    assert result.is_error is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert "have not connected your Third Party account" in text
    assert "does not support URL elicitation" in text
    link = re.search(r"(http://\S+/connect/tp/\?ref=\S+?) to connect", text)
    assert link, text
    assert "is connected" in carol.open(link.group(1)).text
    assert _who(await carol.call(elicit=False))["user"] == "carol-at-tp"


async def test_stateless_revision_asks_inside_the_input_required_round(stack: PerUserStack) -> None:
    grace = Person(stack, "grace")
    live = stack.live
    assert live is not None
    capabilities = {"elicitation": {"url": {}}}
    headers = {"Authorization": f"Bearer {grace.token}"}
    async with httpx.AsyncClient(timeout=30.0) as client:
        message = modern_message(1, "tools/call", {"name": "mine_whoami", "arguments": {}}, capabilities)
        sent = await client.post(live.url, json=message, headers={**modern_headers(message), **headers})
        first = sent.json()
        result = first["result"]
        assert result["resultType"] == "input_required", first
        [(key, asked)] = result["inputRequests"].items()
        assert asked["params"]["mode"] == "url" and "elicitationId" not in asked["params"]
        assert "is connected" in (await anyio.to_thread.run_sync(grace.open, asked["params"]["url"])).text
        retry = modern_message(2, "tools/call", {"name": "mine_whoami", "arguments": {},
                                                 "inputResponses": {key: {"action": "accept"}},
                                                 "requestState": result["requestState"]}, capabilities)
        done = (await client.post(live.url, json=retry, headers={**modern_headers(retry), **headers})).json()
    assert done["result"]["structuredContent"]["user"] == "grace-at-tp", done


async def test_the_pool_of_user_sessions_is_bounded(stack: PerUserStack, alice: Person) -> None:
    before = _who(await alice.call())["session"]
    # CAP other users call after alice: her idle session is the least recently used, closed.
    for name in ("dave", "erin", "frank")[:CAP]:
        person = Person(stack, name)
        assert _who(await person.call())["user"] == f"{name}-at-tp"
    after = _who(await alice.call())
    assert after["user"] == "alice-at-tp" and after["session"] != before


async def test_a_refused_token_is_refreshed_without_asking(stack: PerUserStack, alice: Person) -> None:
    _who(await alice.call())
    refreshes = stack.third_party.stats()["refreshes"]
    refused = (await _seen(alice))["refused"]
    stack.third_party.control("expire")  # every token issued so far: refused by the upstream now
    opened = len(alice.opened)
    assert _who(await alice.call())["user"] == "alice-at-tp"
    assert len(alice.opened) == opened  # the vault refreshed it: nobody was asked
    assert stack.third_party.stats()["refreshes"] == refreshes + 1
    assert (await _seen(alice))["refused"] > refused  # the upstream did refuse the old token


async def test_a_refused_token_that_cannot_be_refreshed_asks_to_connect_again(
    stack: PerUserStack, alice: Person
) -> None:
    _who(await alice.call())
    stack.third_party.control("expire")
    stack.third_party.control("forget-refresh")  # the provider ended every grant
    opened = len(alice.opened)
    assert _who(await alice.call())["user"] == "alice-at-tp"
    assert len(alice.opened) == opened + 1
    assert "refused your stored token" in alice.opened[-1].message


async def test_an_http_tool_whose_service_answers_401_asks_to_connect_again(
    stack: PerUserStack, alice: Person
) -> None:
    first = await alice.call("tp_me")
    assert first.structured_content["user"] == "alice-at-tp"  # type: ignore[index]
    stack.third_party.control("expire")
    stack.third_party.control("forget-refresh")
    opened = len(alice.opened)
    again = await alice.call("tp_me")
    assert again.is_error is not True, again
    assert again.structured_content["user"] == "alice-at-tp"  # type: ignore[index]
    assert len(alice.opened) == opened + 1 and "refused your stored token" in alice.opened[-1].message


@contextlib.contextmanager
def _forbidden(stack: PerUserStack, user: str, scope: str = "") -> Iterator[None]:
    stack.third_party.control("forbid", user=user, scope=scope)
    try:
        yield
    finally:
        stack.third_party.control("allow", user=user)


def _error(result: Any) -> str:
    assert result.is_error is True, result
    text: str = result.content[0].text
    return text


async def test_a_plain_403_keeps_the_token_and_is_the_upstreams_answer(
    stack: PerUserStack, alice: Person
) -> None:
    # The "answered" breaker count: a 403 is the upstream alive, not a failure (REGISTRY_UPSTREAM_
    # BREAKER_FAILURES is 5 by default: six refusals in a row would open it if they counted).
    for tool in ("mine_whoami", "tp_me"):
        before = _who(await alice.call(tool))
        opened, refreshes = len(alice.opened), stack.third_party.stats()["refreshes"]
        # Requests answered 403: by the third party to the http tool, by the upstream to our POSTs
        # (the SDK session's own GET stream may be refused too, in the background: not counted).
        posts = (await _seen(alice))["forbidden"]
        with _forbidden(stack, "alice-at-tp"):
            for _ in range(6):
                refused = stack.third_party.stats()["forbidden"]
                said = _error(await alice.call(tool))
                assert "HTTP 403" in said and "alice-at-tp has no access to this API" in said, said
                if tool == "tp_me":
                    once = stack.third_party.stats()["forbidden"] == refused + 1
                    assert once, "tp_me: one request, no retry"
        after = _who(await alice.call(tool))
        if tool == "mine_whoami":
            forbidden = (await _seen(alice))["forbidden"]
            assert forbidden == posts + 6, f"one request per call, no retry ({forbidden - posts})"
        assert after["user"] == "alice-at-tp", f"{tool}: the call runs again once the service allows it"
        assert len(alice.opened) == opened, f"{tool}: nobody was asked to connect again after a 403"
        kept = stack.third_party.stats()["refreshes"] == refreshes
        assert kept, f"{tool}: the token was kept, not refreshed"
        if tool == "mine_whoami":
            assert after["session"] == before["session"], "a 403 leaves the upstream session in place"
    # A resource read and a prompt: the same 403 is their JSON-RPC error, with the reason.
    with _forbidden(stack, "alice-at-tp"):
        async with alice.session() as session:
            with anyio.fail_after(40), pytest.raises(MCPError) as read:
                await session.read_resource("user://me/identity")
            with anyio.fail_after(40), pytest.raises(MCPError) as prompt:
                await session.get_prompt("mine_greeting", {})
    for failed in (read, prompt):
        said = str(failed.value)
        assert "HTTP 403" in said and "alice-at-tp has no access to this API" in said, said
    assert len(alice.opened) == opened, "nobody was asked to connect again after a read's 403"


async def test_insufficient_scope_names_the_scope_and_keeps_the_token(
    stack: PerUserStack, alice: Person
) -> None:
    for tool in ("mine_whoami", "tp_me"):
        _who(await alice.call(tool))
        opened, refreshes = len(alice.opened), stack.third_party.stats()["refreshes"]
        with _forbidden(stack, "alice-at-tp", scope="profile write"):
            said = _error(await alice.call(tool))
        assert "needs the scope 'profile write'" in said, f"{tool}: the scope asked for is named: {said}"
        assert "this API needs the scope profile write" in said, f"{tool}: the service's reason: {said}"
        assert "provider 'tp'" in said and "operator" in said, f"{tool}: who can grant it: {said}"
        assert len(alice.opened) == opened, f"{tool}: no re-prompt of our own for a scope"
        assert stack.third_party.stats()["refreshes"] == refreshes, f"{tool}: the token was kept"
        assert _who(await alice.call(tool))["user"] == "alice-at-tp", f"{tool}: the same token works again"


async def test_insufficient_scope_within_the_operators_scopes_connects_again_for_it(
    stack: PerUserStack,
) -> None:
    """2025-11-25 authorization "Scope Challenge Handling": the operator allows ``write`` for the
    provider; a service asking for it has the user connect again (the connect flow asks for the
    provider's scopes), then the call runs once more with the new grant."""
    live = stack.live
    assert live is not None
    scopes = "from connections.models import Provider; Provider.objects.filter(slug='tp').update(scopes={!r})"
    people = {"mine_whoami": Person(stack, "ivan"), "tp_me": Person(stack, "judy")}
    for tool, person in people.items():  # connected while the provider's scopes are "profile"
        assert _who(await person.call(tool))["user"] == f"{person.name}-at-tp"
    live.manage("shell", "-c", scopes.format("profile write"))
    try:
        for tool, person in people.items():
            name = person.name
            with _forbidden(stack, f"{name}-at-tp", scope="write"):
                stepped = await person.call(tool)
                assert _who(stepped)["user"] == f"{name}-at-tp", f"{tool}: the call ran after the step-up"
                assert len(person.opened) == 2, f"{tool}: asked once to connect, once to grant the scope"
                assert "asks for the scope 'write'" in person.opened[-1].message, person.opened[-1].message
                assert _who(await person.call(tool))["user"] == f"{name}-at-tp"
                assert len(person.opened) == 2, f"{tool}: the new grant holds the scope: no prompt"
    finally:
        live.manage("shell", "-c", scopes.format("profile"))


async def test_a_403_to_the_handshake_is_the_upstreams_answer_not_a_reconnect(stack: PerUserStack) -> None:
    heidi = Person(stack, "heidi")
    with _forbidden(stack, "heidi-at-tp"):
        said = _error(await heidi.call())  # connects (no token yet), then the handshake is refused
        assert len(heidi.opened) == 1, "asked to connect once: she had no token"
        assert "HTTP 403" in said and "heidi-at-tp has no access to this API" in said, said
        again = _error(await heidi.call())
        assert "HTTP 403" in again and len(heidi.opened) == 1, "the token was kept: no second connect"
    assert _who(await heidi.call())["user"] == "heidi-at-tp"
    assert len(heidi.opened) == 1


async def test_no_live_token_is_in_the_servers_log(stack: PerUserStack, alice: Person) -> None:
    _who(await alice.call())
    stats = stack.third_party.stats()
    secrets = [*stats["tokens"], *stats["refresh_tokens"]]
    assert stats["tokens"], "no live token to look for"
    text = stack.live.log_text()  # type: ignore[union-attr]
    assert text, "no server log to look in"
    for secret in secrets:
        assert secret not in text, "a live token is in the server log"
