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

Any later caller (an upstream server's call path, token exchange) asks the same source.
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

DEFAULT_SOURCE = "connections.credentials.credential_for"
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


def supports_url_mode(capabilities: dict[str, Any]) -> bool:
    """2025-11-25 client/elicitation.mdx "Capabilities": ``elicitation: {}`` means form mode only;
    URL mode needs ``elicitation.url``."""
    elicitation = capabilities.get("elicitation")
    return isinstance(elicitation, dict) and isinstance(elicitation.get("url"), dict)


async def bearer(tool: str, provider: str, ctx: Context) -> str:
    """The user's token for ``provider``, asking the client to connect the user when there is none."""
    ask = source()
    elicitation_id = secrets.token_urlsafe(16)
    try:
        return await ask(ctx.principal, provider, elicitation_id)
    except CannotActAsUser as exc:
        raise ToolError(f"Tool {tool!r} calls its service as you: {exc}") from None
    except ConnectionNeeded as needed:
        connect = needed
    why = (f"Tool {tool!r} calls {connect.provider_name} as you, and you have not connected your "
           f"{connect.provider_name} account yet")
    if not supports_url_mode(ctx.client_capabilities):
        raise ToolError(f"{why}. Open {connect.url} to connect it, then call the tool again (this "
                        f"client does not support URL elicitation, which would have opened it).")
    params: dict[str, Any] = {"mode": "url", "url": connect.url,
                              "message": f"{why}. Open this page to connect it."}
    if ctx.protocol_version in URL_ELICITATION_ID_REVISIONS:
        params["elicitationId"] = elicitation_id
    answer = await ctx.elicit(params, key=f"connect-{provider}")
    if answer.get("action") != "accept":
        raise ToolError(f"{why}: the client answered {answer.get('action')!r}, not 'accept'.")
    # "accept" is the user's consent to open the page, not its completion (2026-07-28
    # client/elicitation.mdx "URL Mode Elicitation Requests": the server "may need to block until
    # the request is fulfilled"): wait a bounded time for the vault to hold the token.
    deadline = time.monotonic() + WAIT_AFTER_ACCEPT
    while True:
        try:
            return await ask(ctx.principal, provider, secrets.token_urlsafe(16))
        except CannotActAsUser as exc:
            raise ToolError(f"Tool {tool!r} calls its service as you: {exc}") from None
        except ConnectionNeeded:
            if time.monotonic() >= deadline:
                raise ToolError(f"{why}. Finish connecting at {connect.url}, then call the tool "
                                "again.") from None
        ctx.check_cancelled()
        await asyncio.sleep(RECHECK_EVERY)
