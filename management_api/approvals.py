"""``/api/v1/approvals/``: the staff approval queue (``access/approvals.py``), newest first.

Reading and deciding both need ``access.decide_approval``: the arguments shown are the call's as
sent and may hold secrets, so nobody who may not decide reads them. ``POST …/<id>/approve`` and
``…/deny`` answer the approval as it now is; one already decided or expired is 409 (nothing
changed), the waiting call having been released by the first decision. ``?pending=true`` lists
the ones still waiting; ``?tool=``, ``?decision=``.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from django_filters import rest_framework as django_filters
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import permissions, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from access import approvals
from access.models import Approval

from .filters import StrictFilterSet
from .pagination import DefinitionCursorPagination
from .views import LISTING, ONE, READS


class CanDecide(permissions.BasePermission):
    message = "Deciding on (and reading) tool call approvals needs the permission access.decide_approval."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_staff and user.has_perm("access.decide_approval"))


class ApprovalPagination(DefinitionCursorPagination):
    ordering = ("-created", "-id")


class ApprovalSerializer(serializers.ModelSerializer):
    decided_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    pending = serializers.BooleanField(read_only=True)

    class Meta:
        model = Approval
        fields = (
            "id",
            "tool",
            "arguments",
            "arguments_digest",
            "principal",
            "principal_id",
            "session",
            "server",
            "created",
            "expires_at",
            "pending",
            "decision",
            "decided_by",
            "decided_at",
        )
        read_only_fields = fields


class ApprovalFilter(StrictFilterSet):
    pending = django_filters.BooleanFilter(method="by_pending")

    def by_pending(self, queryset: QuerySet[Approval], name: str, value: bool) -> QuerySet[Approval]:
        waiting = {"decision": "", "expires_at__gt": timezone.now()}
        return queryset.filter(**waiting) if value else queryset.exclude(**waiting)

    class Meta:
        model = Approval
        fields = ("tool", "decision", "principal", "server", "pending")


NOT_PENDING = {409: {"description": "Already decided or expired: nothing changed."}}


@extend_schema_view(
    list=extend_schema(
        summary="Tool calls waiting for (or given) a staff decision, newest first",
        responses={200: ApprovalSerializer(many=True), **READS},
        description="Calls of tools whose approval policy is `staff`. The arguments "
        f"are the call's as sent (they may hold secrets). {LISTING}",
    ),
    retrieve=extend_schema(
        summary="One approval",
        responses={200: ApprovalSerializer, **ONE},
        description="One call of a `staff` tool: the tool, its arguments as sent, who called, "
        "when it stops waiting, and the decision once taken (who, when).",
    ),
)
class ApprovalViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Approval.objects.select_related("decided_by").all()
    serializer_class = ApprovalSerializer
    permission_classes = [permissions.IsAdminUser, CanDecide]
    pagination_class = ApprovalPagination
    filterset_class = ApprovalFilter

    @extend_schema(
        summary="Approve: the waiting call runs",
        request=None,
        responses={200: ApprovalSerializer, **ONE, **NOT_PENDING},
        description="Approve a pending call: the worker holding it, whichever it is, runs the tool. "
        "Audited with who approved. 409 when the approval was already decided or has expired.",
    )
    def approve(self, request: Request, pk: str | None = None) -> Response:
        return self._decide(request, approve=True)

    @extend_schema(
        summary="Deny: the waiting call ends with isError",
        request=None,
        responses={200: ApprovalSerializer, **ONE, **NOT_PENDING},
        description="Deny a pending call: it ends with an `isError` result saying staff denied it; the "
        "tool does not run. Audited with who denied. 409 when already decided or expired.",
    )
    def deny(self, request: Request, pk: str | None = None) -> Response:
        return self._decide(request, approve=False)

    def _decide(self, request: Request, *, approve: bool) -> Response:
        row = self.get_object()  # 404 for an unknown id
        try:
            row = approvals.decide(row.pk, approve, request.user)
        except approvals.NotPending as exc:
            body = {"detail": str(exc), "approval": ApprovalSerializer(exc.approval).data}
            return Response(body, status=status.HTTP_409_CONFLICT)
        return Response(ApprovalSerializer(Approval.objects.select_related("decided_by").get(pk=row.pk)).data)


def action_urls() -> list[Any]:
    """``approvals/<id>/approve`` and ``…/deny``, without the router's trailing slash (as the
    upstreams' actions)."""
    from django.urls import path

    def view(name: str) -> Any:
        return ApprovalViewSet.as_view({"post": name})

    return [
        path("approvals/<int:pk>/approve", view("approve"), name="approval-approve"),
        path("approvals/<int:pk>/deny", view("deny"), name="approval-deny"),
    ]
