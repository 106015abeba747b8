"""``/api/v1/sessions/``: live MCP sessions, read from the session store (memory, or Redis: every
worker's), and ``DELETE`` to end one exactly as an MCP ``DELETE /mcp`` does (``terminate`` of the
MCP service the URLconf hands the view: the record goes, so every worker answers 404; its
running requests stop and its open streams close on every worker). ``page_of`` and ``end`` are
also the admin's "Live MCP sessions" page's (``session_admin.py``).

A session id is a bearer credential of its MCP client, so the API never shows one whole: a row
shows the id's first characters, and is addressed by its ``key``, a SHA-256 digest of the id.
Pages are newest first, with an opaque signed cursor; no endpoint scans Redis keys (the store
keeps a sorted index, which also serves Redis Cluster).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from asgiref.sync import async_to_sync
from django.core import signing
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, permissions, serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from mcp_protocol.session import SHOWN_PREFIX, Session
from mcp_protocol.store_errors import StoreUnavailable
from mcp_protocol.stores.claims import ClaimStore
from mcp_protocol.stores.sessions import SessionStore
from mcp_protocol.transports.host import RuntimeHost

PAGE_SIZE, MAX_PAGE_SIZE = 100, 500
_SALT = "registry.api.sessions.cursor"
# After every urlsafe-base64 id: a position that no longer resolves to a session resumes with all
# of its instant's sessions (a repeat rather than a gap).
_AFTER_EVERY_ID = "~"


def key_of(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()[:32]


def page_of(service: RuntimeHost, size: int, after: tuple[float, str] | None = None
            ) -> tuple[list[Session], set[str]]:
    """Up to ``size`` live sessions, newest first (after ``after``), and the ids among them whose
    GET stream is open on some worker (the event store's claims). The API and the admin page."""
    store: SessionStore = service.backends()[0]
    claims: ClaimStore = service.backends()[1].claims
    page = async_to_sync(store.list_sessions)(limit=size, after=after)
    return page, set(async_to_sync(claims.open_streams)([s.id for s in page]))


def resolve(service: RuntimeHost, key: str) -> str | None:
    """The live session id with this key: the store's index of ids, hashed here (no GETs)."""
    ids = async_to_sync(service.backends()[0].session_ids)()
    return next((sid for sid in ids if key_of(sid) == key), None)


def end(service: RuntimeHost, key: str) -> bool:
    """End the session with this key as an MCP ``DELETE`` does, on every worker; False: none has it.
    The API's ``DELETE`` and the admin's "end session" both come here."""
    session_id = resolve(service, key)
    return session_id is not None and bool(async_to_sync(service.terminate)(session_id))


class SessionPermissions(permissions.BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        action = "delete" if request.method == "DELETE" else "view"
        return bool(request.user.has_perm(f"management_api.{action}_livesession"))


class SessionSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="Addresses the session in this API (not its id).")
    id = serializers.CharField(help_text="The first characters of the session id.")
    principal = serializers.CharField(allow_null=True)
    protocol_version = serializers.CharField(allow_null=True)
    state = serializers.CharField()
    client_info = serializers.DictField()
    log_level = serializers.CharField(allow_null=True)
    subscriptions = serializers.IntegerField(help_text="How many resources it subscribed to.")
    standalone_stream = serializers.BooleanField(
        help_text="Its GET stream is open on some worker (a request's own streams are not counted).")
    created_at = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()

    @staticmethod
    def row(session: Session, streaming: bool) -> dict[str, Any]:
        return {
            "key": key_of(session.id),
            "id": session.id[:SHOWN_PREFIX] + "…",  # the id is a credential: its start only
            "principal": session.principal,
            "protocol_version": session.protocol_version,
            "state": session.state,
            "client_info": session.client_info,
            "log_level": session.log_level,
            "subscriptions": len(session.subscriptions),
            "standalone_stream": streaming,
            "created_at": datetime.fromtimestamp(session.created_at, UTC),
            "last_seen": datetime.fromtimestamp(session.last_seen, UTC),
        }


def _unavailable() -> exceptions.APIException:
    error = exceptions.APIException("The session store is unreachable; retry shortly.")
    error.status_code = 503
    return error


class SessionViewSet(viewsets.ViewSet):
    permission_classes = [permissions.IsAdminUser, SessionPermissions]
    lookup_field = "key"
    lookup_value_regex = "[0-9a-f]{32}"
    service: RuntimeHost  # the MCP service: handed by the URLconf through ``serving``

    @classmethod
    def serving(cls, service: RuntimeHost) -> type[SessionViewSet]:
        """This viewset, handed the MCP service whose sessions it lists and ends (a router passes
        a view no arguments of its own, so the URLconf registers this subclass)."""
        return type(cls.__name__, (cls,), {"service": service, "__module__": cls.__module__})

    @extend_schema(
        summary="Live MCP sessions, newest first",
        description="The MCP sessions open on every worker, newest first, from the session store: "
        "who opened each, with which client and protocol version, and whether its stream is open. "
        "A session id is a credential: a row shows its first characters and is addressed by `key`. "
        "`next` is the next page's link (no `count`: the store keeps no total).",
        parameters=[
            OpenApiParameter("cursor", str, description="The `next` link's cursor."),
            OpenApiParameter("page_size", int, description=f"Up to {MAX_PAGE_SIZE} (default {PAGE_SIZE})."),
        ],
        responses={200: inline_serializer("SessionPage", {
            "next": serializers.URLField(allow_null=True), "results": SessionSerializer(many=True)}),
            400: OpenApiTypes.OBJECT, 401: OpenApiTypes.OBJECT, 403: OpenApiTypes.OBJECT,
            503: OpenApiTypes.OBJECT},
    )
    def list(self, request: Request) -> Response:
        size = self._page_size(request)
        after = self._after(request.query_params.get("cursor"))
        try:
            page, streaming = page_of(self.service, size, after)
        except StoreUnavailable:
            raise _unavailable() from None
        next_url = None
        if len(page) == size:
            cursor = signing.dumps([page[-1].created_at, key_of(page[-1].id)], salt=_SALT)
            next_url = request.build_absolute_uri(f"{request.path}?page_size={size}&cursor={cursor}")
        rows = [SessionSerializer.row(s, s.id in streaming) for s in page]
        return Response({"next": next_url, "results": SessionSerializer(rows, many=True).data})

    @extend_schema(summary="End a session, as an MCP DELETE does, on every worker",
                   description="End a live MCP session by its `key`: its record goes, so every worker "
                   "answers its client 404; its running requests stop and its streams close.",
                   responses={204: None, 401: OpenApiTypes.OBJECT, 403: OpenApiTypes.OBJECT,
                              404: OpenApiTypes.OBJECT, 503: OpenApiTypes.OBJECT})
    def destroy(self, request: Request, key: str) -> Response:
        try:
            if not end(self.service, key):
                raise exceptions.NotFound("No live session has this key.")
        except StoreUnavailable:
            raise _unavailable() from None
        return Response(status=204)

    # -- helpers --------------------------------------------------------------------------------
    @staticmethod
    def _page_size(request: Request) -> int:
        raw = request.query_params.get("page_size", str(PAGE_SIZE))
        # isascii: "²" is a digit to isdigit() but no number to int().
        if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MAX_PAGE_SIZE:
            raise exceptions.ValidationError({"page_size": [f"A whole number from 1 to {MAX_PAGE_SIZE}."]})
        return int(raw)

    def _after(self, cursor: str | None) -> tuple[float, str] | None:
        if cursor is None:
            return None
        try:
            created_at, key = signing.loads(cursor, salt=_SALT)
            created_at = float(created_at)
        except (signing.BadSignature, TypeError, ValueError):
            raise exceptions.ValidationError({"cursor": ["Invalid cursor."]}) from None
        return created_at, resolve(self.service, str(key)) or _AFTER_EVERY_ID
