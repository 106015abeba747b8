"""Step-up authorization (MCP authorization, 2026-07-28, "Scope Challenge Handling"): an OAuth
token asks for a tool, resource or prompt that exists but that none of its scopes grants, and a
scope of ``OAUTH_SCOPES`` would. The answer is HTTP 403 with ``error="insufficient_scope"`` and,
in one challenge, every scope the operation needs: the narrowest scope that grants it (scope
hierarchies: a broader scope implies a narrower one, ``Grant.covers``, so the broad one is named
only when nothing narrower does) with the token's own scopes, so a client that re-authorizes
with what it is told keeps what it had.

A definition no scope grants stays as unknown as one that does not exist (the core's answer);
API keys and open mode never get here (a key's grant is fixed by its owner, not stepped up).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..definitions import Snapshot
from .principal import Grant, Principal

# method → (grant kind, the param naming the definition)
STEPPED = {
    "tools/call": ("tools", "name"),
    "resources/read": ("resources", "uri"),
    "prompts/get": ("prompts", "name"),
}


def _target(snapshot: Snapshot, kind: str, name: str) -> tuple[str, tuple[str, ...]] | None:
    """The definition's grant key (a URI template for a templated resource) and its tags."""
    if kind == "tools":
        tool = snapshot.tool(name)
        return (tool.name, tuple(tool.tags)) if tool is not None else None
    if kind == "prompts":
        prompt = snapshot.prompt(name)
        return (prompt.name, tuple(prompt.tags)) if prompt is not None else None
    resource = snapshot.resource(name)
    if resource is not None:
        return resource.uri, tuple(resource.tags)
    served = snapshot.serving_template(name)
    return (served[0].uri_template, tuple(served[0].tags)) if served is not None else None


def needed_scopes(principal: Principal, scopes: Mapping[str, Grant], snapshot: Snapshot, method: str,
                  params: Mapping[str, Any] | None) -> list[str] | None:
    """The scopes to name in a 403 for this request, or None when there is nothing to step up to."""
    stepped = STEPPED.get(method)
    if stepped is None or not principal.scopes or not isinstance(params, Mapping):
        return None
    kind, param = stepped
    name = params.get(param)
    if not isinstance(name, str):
        return None
    target = _target(snapshot, kind, name)
    if target is None or principal.grant.allows(kind, *target):
        return None  # unknown (the core says so) or already granted
    granting = {scope: grant for scope, grant in scopes.items() if grant.allows(kind, *target)}
    if not granting:
        return None
    # The narrowest: a granting scope that covers no other granting scope.
    narrowest = sorted(s for s, g in granting.items()
                       if not any(o != s and g.covers(og) for o, og in granting.items()))
    return [*principal.scopes, *(s for s in narrowest[:1] if s not in principal.scopes)]
