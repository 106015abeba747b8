"""Step-up challenges (auth/step_up.py) and scope hierarchies (Grant.covers): which scopes a 403
names for an OAuth token short of one (MCP authorization 2026-07-28, "Scope Challenge Handling")."""

from __future__ import annotations

from mcp_protocol.auth.principal import ALL, Grant, Principal
from mcp_protocol.auth.step_up import needed_scopes
from mcp_protocol.definitions import Snapshot, Tool

SNAPSHOT = Snapshot(
    version="1",
    tools=(
        Tool("echo", {"type": "object"}),
        Tool("add", {"type": "object"}, tags=("math",)),
        Tool("ssh", {"type": "object"}),
    ),
)
SCOPES = {
    "mcp": ALL,
    "mcp:echo": Grant.from_spec({"tools": ["echo"]}),  # as MCP_OAUTH_SCOPES reads: kinds not named, none
    "mcp:math": Grant.from_spec({"tags": ["math"]}),
    "mcp:tools": Grant.from_spec({"tools": ["*"]}),
}


def holder(*scopes: str) -> Principal:
    grant = SCOPES[scopes[0]]
    for scope in scopes[1:]:
        grant = grant.union(SCOPES[scope])
    return Principal("oauth:x 1", grant, scopes=scopes)


def test_a_broader_scope_covers_a_narrower_one() -> None:
    assert ALL.covers(SCOPES["mcp:echo"]) and SCOPES["mcp:tools"].covers(SCOPES["mcp:echo"])
    assert not SCOPES["mcp:echo"].covers(SCOPES["mcp:tools"])
    assert not SCOPES["mcp:echo"].covers(SCOPES["mcp:math"])  # tags widen a grant


def test_the_challenge_names_the_tokens_scopes_and_the_narrowest_that_grants() -> None:
    call = {"name": "add", "arguments": {}}
    # mcp, mcp:tools and mcp:math grant add; mcp:math is the narrowest (the others cover it).
    assert needed_scopes(holder("mcp:echo"), SCOPES, SNAPSHOT, "tools/call", call) == ["mcp:echo", "mcp:math"]
    ssh = {"name": "ssh"}
    assert needed_scopes(holder("mcp:echo"), SCOPES, SNAPSHOT, "tools/call", ssh) == ["mcp:echo", "mcp:tools"]


def test_no_challenge_when_granted_unknown_or_granted_by_no_scope() -> None:
    assert needed_scopes(holder("mcp:echo"), SCOPES, SNAPSHOT, "tools/call", {"name": "echo"}) is None
    assert needed_scopes(holder("mcp:echo"), SCOPES, SNAPSHOT, "tools/call", {"name": "nope"}) is None
    narrow = {"mcp:echo": SCOPES["mcp:echo"]}
    assert needed_scopes(holder("mcp:echo"), narrow, SNAPSHOT, "tools/call", {"name": "ssh"}) is None
    assert needed_scopes(holder("mcp:echo"), SCOPES, SNAPSHOT, "tools/list", {}) is None
    key = Principal("key:1", SCOPES["mcp:echo"])  # an API key: no scopes, nothing to step up to
    assert needed_scopes(key, SCOPES, SNAPSHOT, "tools/call", {"name": "ssh"}) is None
