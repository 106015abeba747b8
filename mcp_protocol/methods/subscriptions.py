"""``subscriptions/listen`` (2026-07-28 basic/patterns/subscriptions.mdx).

The request's filter (``notifications``: ``toolsListChanged``, ``promptsListChanged``,
``resourcesListChanged``, ``resourceSubscriptions``) is cut down to what this server supports and
acknowledged first, ``resourceSubscriptions`` cut to the URIs the caller's grant may read
(``notifications/subscriptions/acknowledged``: "MUST ... as the first message",
listing "the subset the server agreed to honor"). Then every change of this process's
``ChangeFeed`` becomes the notifications the filter asked for (``fanout.notifications``, the
mapping every transport uses, with the filter as the stream's ``Audience``) — only those ("MUST
NOT send notification types the client has not explicitly requested") — each carrying
``_meta["io.modelcontextprotocol/subscriptionId"]`` = the listen request's id. A stream hears only
the changes that reach its server's endpoint (``Server.endpoint_key``; a change naming other
endpoints is not even handed to it). It runs until the client closes the stream (HTTP) or cancels
it (stdio: ``notifications/cancelled``): the handler is then cancelled like any request. When
the server ends it (shutdown; the caller's key revoked or expired, its token expired) it answers
the request with a complete result carrying the subscription id ("Graceful Closure").

``taskIds`` (the extension io.modelcontextprotocol/tasks, SEP-2663 "Task Status Notifications"):
from a request that does not declare the extension → -32021; otherwise honoured for the tasks the
caller may read (others left out silently, as for ``tasks/get``: no oracle), each one's current
``DetailedTask`` sent after the acknowledgment, then again on every transition, on whichever
worker it happens (the bus channel ``task:<id>``), as ``notifications/tasks``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..auth.principal import current
from ..auth.scopes import granted_uri
from ..bus.base import Subscription
from ..changefeed import FeedSubscription
from ..endpoints import CATCH_ALL
from ..errors import InvalidParams
from ..fanout.notifications import Audience, Change, notifications
from ..tasks.reach import find
from ..tasks.signals import status_channel
from ..tasks.wire import declares_extension, missing_extension, task_to_wire
from .base import Call

META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
TASK = "task"  # a feed item of this stream only: a followed task changed
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
        # As resources/subscribe: a URI outside the caller's grant is left out of what is honoured,
        # silently (no oracle), so no resources/updated ever tells it that something there changed.
        granted = [u for u in dict.fromkeys(uris) if granted_uri(call.snapshot, call.full_snapshot, u)]
        if granted and caps.resources and caps.resources_subscribe:
            honoured["resourceSubscriptions"] = granted
    return honoured


def audience(honoured: dict[str, Any], endpoint: str = CATCH_ALL) -> Audience:
    """What a stream with filter ``honoured`` on endpoint ``endpoint`` hears about."""
    kinds = tuple(kind for kind, flag in _LIST_FLAGS.items() if honoured.get(flag))
    return Audience(kinds, tuple(honoured.get("resourceSubscriptions") or ()), endpoint=endpoint)


async def _task_ids(call: Call) -> list[str]:
    """The requested ``taskIds`` the caller may follow (-32021 without the extension)."""
    requested = (call.params.get("notifications") or {}).get("taskIds")
    if requested is None:
        return []
    if not isinstance(requested, list) or not all(isinstance(t, str) for t in requested):
        raise InvalidParams("params.notifications.taskIds must be an array of strings")
    runner = call.server.tasks
    if runner is None or not declares_extension(call.session.client_capabilities):
        raise missing_extension("task notifications")
    principal, grant, snapshot = call.session.principal, current().grant, call.full_snapshot
    found = [await find(runner.store, t, principal, grant, snapshot) for t in dict.fromkeys(requested)]
    return [record.task_id for record in found if record is not None]


async def _forward(subscription: Subscription, changes: FeedSubscription) -> None:
    async for message in subscription:
        if isinstance(message.get("taskId"), str):
            changes.put({"kind": TASK, "taskId": message["taskId"]})


async def listen(call: Call) -> dict[str, Any]:
    honoured = honoured_filter(call)
    task_ids = await _task_ids(call)
    if task_ids:
        honoured["taskIds"] = task_ids
    # Only the changes that reach this server's endpoint (issue 39: a virtual server's streams hear
    # of what changes its view): the feed routes by it, and the mapping checks it again.
    endpoint = call.server.endpoint_key
    hears, caps = audience(honoured, endpoint), call.server.provider.capabilities
    meta = {META_SUBSCRIPTION_ID: call.ctx.request_id}
    outbound = call.ctx.outbound
    runner = call.server.tasks
    # Subscribed before the acknowledgment goes out: a change committed after the client has it
    # is never missed.
    who = current()
    forwarders: list[tuple[Subscription, asyncio.Task[None]]] = []
    with call.server.feed.subscribe(who.id, endpoint) as changes:
        if who.expires_at is not None:  # a token's or a key's expiry ends the stream (issue 24)
            left = max(0.0, who.expires_at - time.time())
            deadline = asyncio.get_running_loop().call_later(left, changes.end)
        try:
            for task_id in task_ids:
                assert runner is not None
                subscription = await runner.bus.subscribe(status_channel(task_id))
                forwarders.append((subscription, asyncio.create_task(_forward(subscription, changes))))
                changes.put({"kind": TASK, "taskId": task_id})  # its state now, after the ack
            await outbound.notify(
                "notifications/subscriptions/acknowledged", {"_meta": meta, "notifications": honoured}
            )
            async for change in changes:
                if change.get("kind") == TASK:
                    assert runner is not None
                    record = await find(
                        runner.store, change["taskId"], call.session.principal, who.grant, call.full_snapshot
                    )
                    if record is not None:
                        task = task_to_wire(record, modern=True, detailed=True)
                        await outbound.notify("notifications/tasks", {"_meta": meta, **task})
                    continue
                for method, params in notifications(Change.of(change), caps, hears):
                    await outbound.notify(method, {"_meta": meta, **(params or {})})
        finally:
            if who.expires_at is not None:
                deadline.cancel()
            for subscription, forwarder in forwarders:
                forwarder.cancel()
                await subscription.close()
    return {"_meta": dict(meta)}
