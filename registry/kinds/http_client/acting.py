"""An http tool that calls its service *as the user* (``Tool.http_connection``: a provider's slug,
issue 42 item 2): the user's own token for that provider goes in ``Authorization: Bearer``.

The token comes from the vault, which lives in an app above this one (``connections``): this
module names only the seam, ``CredentialSource`` (``REGISTRY_HTTP_USER_CREDENTIALS``, a dotted
path read when asked, default ``connections.credentials.credential_for``), and what it raises:

- ``ConnectionNeeded``: the user has no usable token (never connected, revoked, refresh failed);
  it carries the connect page's URL for this elicitation. The tool then asks the client to open it
  with a URL-mode elicitation (2025-11-25 client/elicitation.mdx "URL Mode"; in 2026-07-28 inside
  the input-required round, which ``ctx.elicit`` does in either era). ``accept`` means the user
  agreed to open the page, not that they finished: the vault is asked again until
  ``WAIT_AFTER_ACCEPT``; still nothing: a tool error asking to retry once connected. A client
  that declared no URL mode (``elicitation.url``) gets a tool error with the link and why.
- ``CannotActAsUser``: nobody to act for (anonymous, or a principal with no user) or the provider
  is unknown: a tool error saying so.

``user_token`` is that dance for any subject: an http tool (``bearer``) and an upstream server
called as the user (``registry/upstreams/acting.py``) share it. When the service answers 401 to
the user's token, ``forget`` (``REGISTRY_HTTP_USER_CREDENTIALS_FORGET``, default
``connections.credentials.forget_credential``) tells the vault, which refreshes the token or drops
it, and the caller asks again with ``refused=True``: a new token, or the same elicitation saying
the old one was refused (RFC 6750 §3.1 ``invalid_token``: "The access token provided is expired,
revoked, malformed, or invalid"), never a bare error. A 403 is not told to the vault: the token
is valid, the access not allowed (RFC 6750 §3.1, ``challenge.py``), so dropping it would only
ask the user to consent again for an account that still lacks access. A 403 ``insufficient_scope``
goes to ``step_up`` (``REGISTRY_HTTP_USER_CREDENTIALS_STEP_UP``, default
``connections.credentials.step_up``): the vault decides whether connecting again can grant the
scope (the operator's provider scopes bound it); if so the same elicitation asks the user, and
the call waits for a token other than the refused one.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any, Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from . import challenge

DEFAULT_SOURCE = "connections.credentials.credential_for"
DEFAULT_FORGET = "connections.credentials.forget_credential"
DEFAULT_STEP_UP = "connections.credentials.step_up"
# 2025-11-25 requires elicitationId on a URL elicitation; 2026-07-28 removed it (the retry's
# requestState ties the answer to the request).
URL_ELICITATION_ID_REVISIONS = frozenset({"2025-11-25"})
WAIT_AFTER_ACCEPT = 20.0  # s: how long a call waits, after "accept", for the user to finish connecting
RECHECK_EVERY = 0.5  # s: between two looks at the vault while waiting (a cache read each)


class ConnectionNeeded(Exception):
    def __init__(self, provider_name: str, url: str) -> None:
        super().__init__(f"connect {provider_name} at {url}")
        self.provider_name = provider_name
        self.url = url


class CannotActAsUser(Exception):
    pass


class CredentialSource(Protocol):
    async def __call__(self, principal: str | None, provider: str, elicitation_id: str) -> str:
        """The user's access token for ``provider`` (a slug), refreshed if it was about to expire;
        ``ConnectionNeeded`` (its URL bound to the user and ``elicitation_id``) or
        ``CannotActAsUser``."""
        ...


def source() -> CredentialSource:
    path = getattr(settings, "REGISTRY_HTTP_USER_CREDENTIALS", DEFAULT_SOURCE)
    found: CredentialSource = import_string(path)
    return found


class CredentialForget(Protocol):
    async def __call__(self, principal: str | None, provider: str, token: str) -> None:
        """The service refused ``token`` (the user's at ``provider``): refresh it or forget it."""
        ...


def forgetter() -> CredentialForget:
    path = getattr(settings, "REGISTRY_HTTP_USER_CREDENTIALS_FORGET", DEFAULT_FORGET)
    found: CredentialForget = import_string(path)
    return found


class CredentialStepUp(Protocol):
    async def __call__(self, principal: str | None, provider: str, scope: str, elicitation_id: str) -> None:
        """A service asked for ``scope`` beyond the user's token at ``provider``: raise
        ``ConnectionNeeded`` (connecting again will ask the provider for it) or ``CannotActAsUser``
        (why it will not be asked for here)."""
        ...


def stepper() -> CredentialStepUp:
    path = getattr(settings, "REGISTRY_HTTP_USER_CREDENTIALS_STEP_UP", DEFAULT_STEP_UP)
    found: CredentialStepUp = import_string(path)
    return found


def supports_url_mode(capabilities: dict[str, Any]) -> bool:
    """2025-11-25 client/elicitation.mdx "Capabilities": ``elicitation: {}`` means form mode only;
    URL mode needs ``elicitation.url``."""
    elicitation = capabilities.get("elicitation")
    return isinstance(elicitation, dict) and isinstance(elicitation.get("url"), dict)


async def bearer(tool: str, provider: str, ctx: Context, *, refused: bool = False) -> str:
    """The user's token for ``provider``, asking the client to connect the user when there is none
    (``refused``: the service refused the last one, and the vault was told: ``forget``)."""
    return await user_token(f"Tool {tool!r}", provider, ctx, refused=refused)


async def user_token(subject: str, provider: str, ctx: Context, *, refused: bool = False,
                     ask: bool = True) -> str:
    """The caller's token for ``provider``, for ``subject`` ("Tool 'x'", "Upstream 'y'"): the one
    elicitation dance of an http tool and a ``user`` upstream alike. ``ask`` False (a resource read,
    a prompt: no URL elicitation there): the link in the ``ToolError`` only."""
    get = source()
    elicitation_id = secrets.token_urlsafe(16)
    try:
        return await get(ctx.principal, provider, elicitation_id)
    except CannotActAsUser as exc:
        raise ToolError(f"{subject} calls its service as you: {exc}") from None
    except ConnectionNeeded as needed:
        connect = needed
    name = connect.provider_name
    if refused:
        why = (f"{subject} calls {name} as you, and {name} refused your stored token (revoked or "
               f"expired): connect your {name} account again")
    else:
        why = f"{subject} calls {name} as you, and you have not connected your {name} account yet"
    key = f"connect-{provider}" + ("-again" if refused else "")
    return await _ask_to_connect(subject, provider, ctx, connect, why, elicitation_id, key, ask=ask)


async def _ask_to_connect(subject: str, provider: str, ctx: Context, connect: ConnectionNeeded, why: str,
                          elicitation_id: str, key: str, *, ask: bool, replacing: str | None = None) -> str:
    """Ask the client to open ``connect.url`` (URL elicitation), then wait for the vault to hold a
    token (``replacing``: another token than that one)."""
    get = source()
    if not ask:
        raise ToolError(f"{why}. Open {connect.url} to connect it, then ask again.")
    if not supports_url_mode(ctx.client_capabilities):
        raise ToolError(f"{why}. Open {connect.url} to connect it, then call the tool again (this "
                        f"client does not support URL elicitation, which would have opened it).")
    params: dict[str, Any] = {"mode": "url", "url": connect.url,
                              "message": f"{why}. Open this page to connect it."}
    if ctx.protocol_version in URL_ELICITATION_ID_REVISIONS:
        params["elicitationId"] = elicitation_id
    # One key per question within a call: a re-prompt after a refusal is a second input request
    # of the same 2026-07-28 call, answered separately from the first.
    answer = await ctx.elicit(params, key=key)
    if answer.get("action") != "accept":
        raise ToolError(f"{why}: the client answered {answer.get('action')!r}, not 'accept'.")
    # "accept" is the user's consent to open the page, not its completion (2026-07-28
    # client/elicitation.mdx "URL Mode Elicitation Requests": the server "may need to block until
    # the request is fulfilled"): wait a bounded time for the vault to hold the token.
    deadline = time.monotonic() + WAIT_AFTER_ACCEPT
    while True:
        try:
            token = await get(ctx.principal, provider, secrets.token_urlsafe(16))
        except CannotActAsUser as exc:
            raise ToolError(f"{subject} calls its service as you: {exc}") from None
        except ConnectionNeeded:
            token = None
        if token is not None and token != replacing:
            if "elicitationId" in params:  # the client can close what it showed for this id
                await ctx.elicitation_complete(elicitation_id)
            return token
        if time.monotonic() >= deadline:
            raise ToolError(f"{why}. Finish connecting at {connect.url}, then call the tool again.")
        ctx.check_cancelled()
        await asyncio.sleep(RECHECK_EVERY)


async def step_up(subject: str, provider: str, ctx: Context, refusal: challenge.Forbidden, service: str,
                  token: str, *, ask: bool = True) -> str:
    """The service answered ``insufficient_scope`` to the user's ``token`` (RFC 6750 §3.1; 2025-11-25
    basic/authorization.mdx "Scope Challenge Handling": re-authorize with the scopes asked for,
    then retry): a new token from connecting again, when the vault's ``CredentialStepUp`` allows it
    (every scope asked for is among the provider's, the operator's bound, and the stored grant
    lacks one). Otherwise a ``ToolError`` naming the scope and why it cannot be granted here."""
    elicitation_id = secrets.token_urlsafe(16)
    try:
        await stepper()(ctx.principal, provider, refusal.scope or "", elicitation_id)
    except CannotActAsUser as exc:
        raise ToolError(f"{subject}: {refusal.explain(service, str(exc))}") from None
    except ConnectionNeeded as connect:
        name = connect.provider_name
        why = (f"{subject} calls {name} as you, and {name} asks for the scope {refusal.scope!r}, which "
               f"your connection was not granted: connect your {name} account again to grant it")
        return await _ask_to_connect(subject, provider, ctx, connect, why, elicitation_id,
                                     f"step-up-{provider}", ask=ask, replacing=token)
    raise ToolError(f"{subject}: {refusal.explain(service)}")


async def forget(principal: str | None, provider: str, token: str) -> None:
    """Tell the vault the service refused ``token`` (HTTP 401): it tries a refresh, else drops the
    connection so the user is asked to connect again. A token already replaced is left alone."""
    await forgetter()(principal, provider, token)
