"""The actions of ``/api/v1/upstreams/<id>/``: ``sync``, ``sync/approve`` and ``test`` (issue 40
item 5), each a POST that needs ``registry.change_upstream`` (on top of being staff): they write
the registry (a sync's change set), or reach out to the upstream.

An upstream that fails (down, garbage, 401, a timeout) is not our failure: the answer is 200 with
the report's ``error`` (or ``test``'s ``ok: false`` and ``error``), never a 5xx, so a caller tells
"the upstream is down" from "the registry is down". An approval of a diff that is stale (the
upstream's rows changed since the review) or of nothing pending is a 409.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import permissions
from rest_framework.request import Request
from rest_framework.response import Response

from registry import upstream_actions

from .authors import author_of
from .errors import Conflict
from .views import ERRORS


class CanChangeUpstreams(permissions.BasePermission):
    message = "Syncing, approving and testing an upstream need the permission to change upstreams."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_staff and user.has_perm("registry.change_upstream"))


REPORT = OpenApiResponse(OpenApiTypes.OBJECT, "The sync's report", [OpenApiExample("A sync", value={
    "added": ["vnd_search"], "updated": [], "missing": [], "restored": [],
    "refused": [{"name": "vnd_" + "x" * 61, "reason": "longer than 64 characters"}],
    "error": "", "health": "up", "pending": False})])
PROBE = OpenApiResponse(OpenApiTypes.OBJECT, "What the upstream answered to initialize", [OpenApiExample(
    "Reached", value={"ok": True, "server_info": {"name": "vendor", "version": "1.2.0"},
                      "protocol_version": "2025-11-25", "capabilities": {"tools": {"listChanged": True}},
                      "latency_ms": 41.5})])
ACTION_ERRORS = {code: ERRORS[code] for code in (401, 403, 404, 429)}


class UpstreamActionsMixin:
    """``sync``, ``sync/approve`` and ``test`` on the upstream viewset, routed in ``urls.py`` by
    ``action_urls`` (without a trailing slash, as the history's ``revert`` is: the router would add one)."""

    @extend_schema(summary="Sync an upstream now", request=None, responses={200: REPORT, **ACTION_ERRORS},
                   description="Lists the upstream and mirrors it (one change set, authored by the caller). "
                   "An upstream failure is a 200 report with `error` (nothing is marked missing). In "
                   "review mode the diff is stored, not applied: the report is the pending diff "
                   "(`pending: true`); approve it with `sync/approve`.")
    def sync(self, request: Request, pk: str | None = None) -> Response:
        upstream = self.get_object()  # type: ignore[attr-defined]
        return Response(upstream_actions.sync_now(upstream, author_of(request)))

    @extend_schema(summary="Approve an upstream's pending sync", request=None,
                   responses={200: REPORT, 409: ERRORS[409], **ACTION_ERRORS},
                   description="Applies the diff a review-mode sync stored (one change set, authored by "
                   "the caller). 409 when nothing is pending, or when the upstream's mirrored rows "
                   "changed since the diff was made (sync again and review the new one).")
    def approve(self, request: Request, pk: str | None = None) -> Response:
        upstream = self.get_object()  # type: ignore[attr-defined]
        try:
            return Response(upstream_actions.approve(upstream, author_of(request)))
        except upstream_actions.NotApproved as exc:
            raise Conflict(str(exc)) from None

    @extend_schema(summary="Test the connection to an upstream", request=None,
                   responses={200: PROBE, **ACTION_ERRORS},
                   description="Connects and initializes only (nothing listed or written): the upstream's "
                   "`server_info`, `protocol_version`, `capabilities` and `latency_ms`, or `ok: false` "
                   "with the `error`.")
    def test(self, request: Request, pk: str | None = None) -> Response:
        upstream = self.get_object()  # type: ignore[attr-defined]
        return Response(upstream_actions.test_connection(upstream))


def action_urls(viewset: Any) -> list[Any]:
    from django.urls import path

    def view(name: str) -> Any:
        return viewset.as_view({"post": name}, permission_classes=[CanChangeUpstreams])

    return [
        path("upstreams/<int:pk>/sync", view("sync"), name="upstream-sync"),
        path("upstreams/<int:pk>/sync/approve", view("approve"), name="upstream-approve"),
        path("upstreams/<int:pk>/test", view("test"), name="upstream-test"),
    ]
