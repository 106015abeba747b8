"""What a change makes the server send: ``KINDS``, and THE mapping from a change to its notifications.

A ``Change`` is what the registry committed (a bus ``changes`` message: one kind of list and the
resources it touched), what a lost bus may have hidden (``changefeed.EVERYTHING``: every list and
every resource), or a key's grant (every list, for the sessions of that key only: ``of_grant``).

The bus ``changes`` message, as publishers must write it (``Change.of`` reads it)::

    {"id": <commit id>, "kind": K, "uris": [<resource uri>, ...], "endpoints": [<key>, ...]}

- ``kind``: ``"tools"``, ``"resources"`` or ``"prompts"`` (that list changed); ``"servers"``
  (a virtual server's row changed: its selection, hence every list of its endpoint: tools,
  resources and prompts ``list_changed`` together); ``"*"`` (anything may have changed: every list
  and, for listen streams, every resource). Any other kind causes no list_changed.
- ``uris``: the resources whose contents changed (``resources/updated`` to their subscribers).
- ``endpoints`` (``endpoints.MESSAGE_KEY``, optional): the endpoint keys (virtual servers' slugs;
  ``endpoints.CATCH_ALL``, ``""``, for ``/mcp`` serving everything) whose view the change may
  alter. Only the sessions and listen streams of those endpoints hear of it; the others are not
  even listed (``SessionStore.endpoint_session_ids``). Without it (a publisher that does not
  know; a lost bus; a grant) the change reaches every endpoint. A ``"servers"`` change names the
  server's own endpoint(s); an edit of a definition names every endpoint whose selection holds it
  before or after the edit (a tag removed takes it out of one), the catch-all included while it
  serves everything; an empty list reaches nobody.

``deliveries`` says which notifications it causes on a server with given capabilities and who
gets each: ``notifications/<kind>/list_changed`` to every session past initialization ([L]
server/tools.mdx, resources.mdx, prompts.mdx "List Changed Notification"), ``notifications/
resources/updated {uri}`` to the subscribers of the URI (server/resources.mdx "Subscriptions"),
only for what the server declared (a capability it did not declare is never notified).

Every place that turns a change into notifications asks this module, on either protocol revision:

- the HTTP fan-out (``writer.py``) finds each delivery's sessions in bulk (the initialized sessions,
  the subscribers of a URI, within the named endpoints' or the key's sessions) and writes it to their
  standalone-stream logs, once across workers; key-scope changes go the same way (``auth/policy``);
- stdio (one legacy session) and a 2026-07-28 ``subscriptions/listen`` stream ask
  ``notifications`` for one ``Audience``: what that recipient hears about, on its endpoint.

Pure: no I/O, no store, no transport.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..endpoints import CATCH_ALL, MESSAGE_KEY
from ..jsonrpc import notification
from ..versions import is_modern

if TYPE_CHECKING:
    from ..provider import ProviderCapabilities
    from ..session import Session

KINDS = ("tools", "resources", "prompts")  # the lists a change (and list_changed) is about
SERVERS = "servers"  # the kind of a virtual server's change: every list of its endpoints


@dataclass(frozen=True, slots=True)
class Change:
    kinds: tuple[str, ...] = ()  # the lists that changed, in KINDS order
    uris: tuple[str, ...] = ()  # the resources that changed
    every_uri: bool = False  # a lost bus: any resource may have changed (listen streams only)
    principals: frozenset[str] | None = None  # a key's grant: only the sessions of these keys
    endpoints: frozenset[str] | None = None  # only the sessions of these endpoints (None: all)

    @classmethod
    def of(cls, message: Mapping[str, Any]) -> Change:
        """The change a bus ``changes`` message (or ``changefeed.EVERYTHING``) stands for (the
        message's shape: this module's docstring)."""
        kind, uris, named = message.get("kind"), message.get("uris"), message.get(MESSAGE_KEY)
        # As endpoints.reaches: anything but a list names no endpoint, so it reaches all of them.
        endpoints = frozenset(e for e in named if isinstance(e, str)) if isinstance(named, list) else None
        if kind == "*":
            return cls(KINDS, every_uri=True, endpoints=endpoints)
        kinds = KINDS if kind == SERVERS else (kind,) if kind in KINDS else ()
        return cls(kinds, tuple(u for u in uris if isinstance(u, str)) if isinstance(uris, list) else (),
                   endpoints=endpoints)

    @classmethod
    def of_grant(cls, principals: Iterable[str]) -> Change:
        """A key's grant changed: every list it sees may have changed, for its sessions only
        (on every endpoint: the grant narrows each endpoint's view alike)."""
        return cls(KINDS, principals=frozenset(principals))

    def reaches(self, endpoint: str) -> bool:
        """Does this change concern the sessions and streams of endpoint ``endpoint``?"""
        return self.endpoints is None or endpoint in self.endpoints


@dataclass(frozen=True, slots=True)
class Audience:
    """What one recipient hears about: these lists, these resources, as the holder of this key,
    on this endpoint."""

    kinds: Collection[str] = ()
    uris: Collection[str] = ()  # in the order a listen stream asked for them (``every_uri``)
    principal: str | None = None
    endpoint: str = CATCH_ALL  # the endpoint key it is served on (Session.endpoint, Server.endpoint_key)

    @classmethod
    def of_session(cls, session: Session) -> Audience:
        """A session's own stream: once initialized, every list and the resources it subscribed
        to. A 2026-07-28 client hears of changes on ``subscriptions/listen`` only."""
        if not session.initialized or is_modern(session.protocol_version):
            return cls()
        return cls(KINDS, session.subscriptions, session.principal, session.endpoint)


@dataclass(frozen=True, slots=True)
class Delivery:
    """One notification a change causes, and who gets it: a list's ``kind`` goes to every
    initialized session, a resource's ``uri`` to its subscribers."""

    method: str
    params: dict[str, Any] | None = None
    kind: str | None = None
    uri: str | None = None

    @property
    def tag(self) -> str:
        """Which delivery of its change a log entry is (a writer that retakes a change skips the
        sessions whose log has it: ``EventStore.tagged``)."""
        return f"list:{self.kind}" if self.kind is not None else f"{self.uri}"

    @property
    def message(self) -> dict[str, Any]:
        return notification(self.method, self.params)

    def reaches(self, audience: Audience) -> bool:
        return self.kind in audience.kinds if self.kind is not None else self.uri in audience.uris


def deliveries(change: Change, caps: ProviderCapabilities) -> list[Delivery]:
    """The notifications ``change`` causes on a server declaring ``caps``, lists first."""
    out: list[Delivery] = []
    if caps.list_changed:
        out += [Delivery(f"notifications/{kind}/list_changed", kind=kind)
                for kind in change.kinds if getattr(caps, kind)]
    if caps.resources and caps.resources_subscribe:
        out += [Delivery("notifications/resources/updated", {"uri": uri}, uri=uri) for uri in change.uris]
    return out


def notifications(change: Change, caps: ProviderCapabilities,
                  audience: Audience) -> list[tuple[str, dict[str, Any] | None]]:
    """The (method, params) one recipient gets for ``change``, in order."""
    if change.principals is not None and audience.principal not in change.principals:
        return []
    if not change.reaches(audience.endpoint):
        return []
    if change.every_uri:
        change = replace(change, uris=tuple(audience.uris))
    return [(d.method, d.params) for d in deliveries(change, caps) if d.reaches(audience)]
