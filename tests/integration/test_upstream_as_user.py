"""Issue 42 item 3 / issue 40 item 4 "per user": an upstream MCP server called as the user, end to
end on loopback (``tests/support/per_user.py``): the third party's OAuth provider and API, an
official-SDK upstream that checks each request's token there (401 when it is refused), mcpsite
with the upstream ``mine`` (``auth`` "user", provider ``tp``), and the official SDK client whose
elicitation handler connects the user in a real HTTP "browser".

First call → URL elicitation → connect → the call completes as that user; two users each see
their own identity over two different upstream sessions (``Mcp-Session-Id``), and one user keeps
the same session between calls; a client without URL elicitation gets the link; the 2026-07-28
input-required round; the per-user pool's bound (least recently used closed first); a token the
upstream refuses is refreshed by the vault without asking, or, when the provider refuses the
refresh too, the user is asked to connect again; the same for an http tool's 401.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

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


async def test_no_live_token_is_in_the_servers_log(stack: PerUserStack, alice: Person) -> None:
    _who(await alice.call())
    stats = stack.third_party.stats()
    secrets = [*stats["tokens"], *stats["refresh_tokens"]]
    assert stats["tokens"], "no live token to look for"
    text = stack.live.log_text()  # type: ignore[union-attr]
    assert text, "no server log to look in"
    for secret in secrets:
        assert secret not in text, "a live token is in the server log"
