"""Calls of an upstream called *as the user* (``Upstream.auth`` "user", issue 42 item 3 and issue
40 item 4 "per user where the credentials are per user").

Each call gets the caller's token at the upstream's connection provider through the one seam
(``registry.kinds.http_client.acting.user_token``: the vault, and the URL-mode elicitation when
the caller has not connected: 2025-11-25 ``elicitation/create`` ``mode: "url"``, 2026-07-28 inside
the input-required round, a tool error with the link for a client without URL elicitation), then
goes over that caller's own pooled session (``pool.UpstreamSessions.for_user``). When the upstream
refuses the token (HTTP 401, ``calls.TokenRefused``), the vault is told (``acting.forget``:
refreshed, else dropped) and the user asked again (``refused=True``), then the call runs once
more; a second refusal is the upstream's answer, not a reason to loop. An HTTP 403 keeps the token
(RFC 6750 §3.1: valid, not allowed; ``challenge.py``): the call fails with the upstream's reason,
except an ``insufficient_scope`` challenge for scopes the operator's provider allows and the
user's grant lacks: the user connects again (``acting.step_up``) and the call runs once more.

Nothing of one caller reaches another: the session (and its ``Mcp-Session-Id``), the token, the
aiohttp connections and cookie jar are per (upstream, principal); nothing caches a result.
"""

from __future__ import annotations

from typing import Any

from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from ..kinds.http_client import acting
from .calls import TokenRefused, UpstreamFailure, run
from .pool import UpstreamSessions
from .relay import Relay


async def run_as_user(sessions: UpstreamSessions, config: Any, method: str, name: str,
                      params: dict[str, Any], ctx: Context, *, ask: bool) -> dict[str, Any]:
    """``run`` over the caller's session with the caller's token. ``ask``: a tool call may ask the
    client to connect (URL elicitation); a resource read or prompt gets the link in its error
    (``UpstreamFailure``). Raises ``ToolError`` (tools) as the http kind does."""
    subject = f"Upstream {config.name!r}"
    service = f"upstream {config.name}"
    try:
        token = await acting.user_token(subject, config.connection, ctx, ask=ask)
        principal = ctx.principal
        if not principal:  # a credential source that answered for nobody: refused, never pooled
            raise ToolError(f"{subject} calls its service as you: sign in to this server as a user")
        try:
            return await run(sessions, config, method, name, params, Relay(ctx), (principal, token))
        except TokenRefused:
            await acting.forget(principal, config.connection, token)
            token = await acting.user_token(subject, config.connection, ctx, refused=True, ask=ask)
        except UpstreamFailure as exc:
            if exc.refusal is None or not exc.refusal.insufficient_scope:
                raise
            # 2025-11-25 basic/authorization.mdx "Scope Challenge Handling": connect again for the
            # scope when the operator's provider allows it, then once more (a new session: the
            # pool replaces one made with another token).
            token = await acting.step_up(subject, config.connection, ctx, exc.refusal, service, token,
                                         ask=ask)
        try:
            return await run(sessions, config, method, name, params, Relay(ctx), (principal, token))
        except TokenRefused:
            raise UpstreamFailure(f"upstream {config.name} refused your token again, just after it "
                                  "was renewed: tell its operator") from None
    except ToolError as exc:
        if ask:
            raise
        raise UpstreamFailure(exc.message) from None
