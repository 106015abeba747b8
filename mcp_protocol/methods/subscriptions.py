"""``subscriptions/listen`` (2026-07-28 basic/patterns/subscriptions.mdx).

The request's filter (``notifications``: ``toolsListChanged``, ``promptsListChanged``,
``resourcesListChanged``, ``resourceSubscriptions``) is cut down to what this server supports and
acknowledged first (``notifications/subscriptions/acknowledged``: "MUST ... as the first message",
listing "the subset the server agreed to honor"). Then every change of this process's
``ChangeFeed`` becomes the notifications the filter asked for (``fanout.notifications``, the
mapping every transport uses, with the filter as the stream's ``Audience``) — only those ("MUST
NOT send notification types the client has not explicitly requested") — each carrying
``_meta["io.modelcontextprotocol/subscriptionId"]`` = the listen request's id. It runs until the
client closes the stream (HTTP) or cancels it (stdio: ``notifications/cancelled``): the handler is
then cancelled like any request. When the server ends it (shutdown) it answers the request with a
complete result carrying the subscription id ("Graceful Closure").
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidParams
from ..fanout.notifications import Audience, Change, notifications
from .base import Call

META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
_LIST_FLAGS = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}


def honoured_filter(call: Call) -> dict[str, Any]:
    """The part of the requested filter this server will deliver (-32602 for a malformed one)."""
    requested = call.params.get("notifications")
    if requested is None:
        requested = {}
    if not isinstance(requested, dict):
        raise InvalidParams("params.notifications must be an object")
    caps = call.server.provider.capabilities
    honoured: dict[str, Any] = {}
    for kind, flag in _LIST_FLAGS.items():
        value = requested.get(flag)
        if value is not None and not isinstance(value, bool):
            raise InvalidParams(f"params.notifications.{flag} must be a boolean")
        if value and caps.list_changed and getattr(caps, kind):
            honoured[flag] = True
    uris = requested.get("resourceSubscriptions")
    if uris is not None:
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise InvalidParams("params.notifications.resourceSubscriptions must be an array of strings")
        if uris and caps.resources and caps.resources_subscribe:
            honoured["resourceSubscriptions"] = list(dict.fromkeys(uris))
    return honoured


def audience(honoured: dict[str, Any]) -> Audience:
    """What a stream with filter ``honoured`` hears about."""
    kinds = tuple(kind for kind, flag in _LIST_FLAGS.items() if honoured.get(flag))
    return Audience(kinds, tuple(honoured.get("resourceSubscriptions") or ()))


async def listen(call: Call) -> dict[str, Any]:
    honoured = honoured_filter(call)
    hears, caps = audience(honoured), call.server.provider.capabilities
    meta = {META_SUBSCRIPTION_ID: call.ctx.request_id}
    outbound = call.ctx.outbound
    # Subscribed before the acknowledgment goes out: a change committed after the client has it
    # is never missed.
    with call.server.feed.subscribe() as changes:
        await outbound.notify(
            "notifications/subscriptions/acknowledged", {"_meta": meta, "notifications": honoured}
        )
        async for change in changes:
            for method, params in notifications(Change.of(change), caps, hears):
                await outbound.notify(method, {"_meta": meta, **(params or {})})
    return {"_meta": dict(meta)}
