"""``/api/v1/audit/``: the audit log of ``/mcp``, read-only, in the REST management API.

``?principal=``, ``?principal_id=``, ``?session=``, ``?method=``, ``?name=``, ``?outcome=``,
``?revision=``, ``?since=`` / ``?until=`` (ISO 8601), newest first.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django_filters import rest_framework as django_filters
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, viewsets

from access.models import AuditRecord
from mcp_protocol.session import SHOWN_PREFIX

from .auth import DEFINITION_PERMISSIONS
from .filters import StrictFilterSet
from .pagination import DefinitionCursorPagination
from .views import LISTING, ONE, READS


class AuditPagination(DefinitionCursorPagination):
    ordering = ("-time", "-id")


class AuditRecordSerializer(serializers.ModelSerializer):
    class Meta:
        model = AuditRecord
        fields = ("id", "time", "principal", "principal_id", "session", "revision", "method", "name",
                  "arguments", "outcome", "error", "duration_ms", "server")
        read_only_fields = fields


class AuditRecordFilter(StrictFilterSet):
    since = django_filters.IsoDateTimeFilter(field_name="time", lookup_expr="gte")
    until = django_filters.IsoDateTimeFilter(field_name="time", lookup_expr="lt")
    # The log keeps a session id's first characters only (the id is a credential): a whole id
    # pasted from a client's log finds its records too.
    session = django_filters.CharFilter(method="by_session")

    def by_session(self, queryset: QuerySet[AuditRecord], name: str, value: str) -> QuerySet[AuditRecord]:
        return queryset.filter(session=value[:SHOWN_PREFIX])

    class Meta:
        model = AuditRecord
        fields = ("principal", "principal_id", "session", "method", "name", "outcome", "revision",
                  "server", "since", "until")


@extend_schema_view(
    list=extend_schema(summary="The audit log of /mcp, newest first",
                       responses={200: AuditRecordSerializer(many=True), **READS},
                       description="What MCP clients did on /mcp (tool calls, reads, prompts), newest "
                       "first: who, on which server (`server`: a virtual server's slug, empty for "
                       "/mcp), in which session, on which registry revision, the outcome and its "
                       f"duration. `?since=` / `?until=` take ISO 8601 times. {LISTING}"),
    retrieve=extend_schema(summary="One audit record", responses={200: AuditRecordSerializer, **ONE},
                           description="One record of the audit log of /mcp, with its arguments "
                           "(size-capped, secrets redacted) and its error, if any."),
)
class AuditRecordViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = AuditRecord.objects.all()
    serializer_class = AuditRecordSerializer
    permission_classes = DEFINITION_PERMISSIONS
    pagination_class = AuditPagination
    filterset_class = AuditRecordFilter
