"""docs/security.md "Upstreams called as the user": user B never gets user A's session or token.

Real processes (``tests/support/per_user.py``): the third party, an official-SDK upstream that
knows each request's user by its token, mcpsite, and two signed-in users whose calls through the
upstream ``mine`` are interleaved and concurrent. Each answer names its caller; on a 2025-era
upstream (sessions) each ``Mcp-Session-Id`` the upstream saw carried one user's token only, and
the two users' sessions are disjoint; on a 2026-07-28 upstream (no sessions) every request still
carries its own caller's token.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.per_user import Person, PerUserStack

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]
ROUNDS = 6


@pytest.fixture(scope="module", params=["2025-11-25", "2026-07-28"])
def stack(request: pytest.FixtureRequest) -> Iterator[PerUserStack]:
    with PerUserStack(legacy=request.param == "2025-11-25") as running:
        yield running


async def _calls(person: Person) -> list[dict[str, Any]]:
    """``ROUNDS`` calls of ``mine_whoami`` at once on one MCP session of ours."""
    async with person.session() as session:
        results = await asyncio.gather(*(session.call_tool("mine_whoami", {}) for _ in range(ROUNDS)))
    for result in results:
        assert result.is_error is not True, result
    return [r.structured_content for r in results]  # type: ignore[misc]


async def test_concurrent_callers_never_share_a_session_or_a_token(stack: PerUserStack) -> None:
    alice, bob = Person(stack, "alice"), Person(stack, "bob")
    await alice.call()  # connected (one URL elicitation each)
    await bob.call()
    seen_by: dict[str, list[dict[str, Any]]] = {}
    answers = await asyncio.gather(_calls(alice), _calls(bob), _calls(alice), _calls(bob))
    for person, found in zip((alice, bob, alice, bob), answers, strict=True):
        seen_by.setdefault(person.name, []).extend(found)
    for name, found in seen_by.items():
        assert {a["user"] for a in found} == {f"{name}-at-tp"}  # every answer as its own caller
    sessions_a = {a["session"] for a in seen_by["alice"]}
    sessions_b = {a["session"] for a in seen_by["bob"]}
    if stack.legacy:
        assert None not in sessions_a | sessions_b and not sessions_a & sessions_b
        seen = (await alice.call("mine_seen")).structured_content["sessions"]  # type: ignore[index]
        assert seen and all(len(users) == 1 for users in seen.values()), seen
    else:
        assert sessions_a == sessions_b == {None}  # 2026-07-28: no session to share at all
    assert len(alice.opened) == len(bob.opened) == 1
