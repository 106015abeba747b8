"""``/api/v1/audit/``: the audit log of ``/mcp``, read-only, in the REST management API.

``?principal=``, ``?principal_id=``, ``?session=``, ``?method=``, ``?name=``, ``?outcome=``,
``?revision=``, ``?since=`` / ``?until=`` (ISO 8601), newest first.
"""

from __future__ import annotations

from django_filters import rest_framework as django_filters
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, viewsets

from access.models import AuditRecord

from .auth import DEFINITION_PERMISSIONS
from .pagination import DefinitionCursorPagination
from .views import ONE, READS


class AuditPagination(DefinitionCursorPagination):
    ordering = ("-time", "-id")


class AuditRecordSerializer(serializers.ModelSerializer):
    class Meta:
        model = AuditRecord
        fields = ("id", "time", "principal", "principal_id", "session", "revision", "method", "name",
                  "arguments", "outcome", "error", "duration_ms")
        read_only_fields = fields


class AuditRecordFilter(django_filters.FilterSet):
    since = django_filters.IsoDateTimeFilter(field_name="time", lookup_expr="gte")
    until = django_filters.IsoDateTimeFilter(field_name="time", lookup_expr="lt")

    class Meta:
        model = AuditRecord
        fields = ("principal", "principal_id", "session", "method", "name", "outcome", "revision",
                  "since", "until")


@extend_schema_view(
    list=extend_schema(summary="The audit log of /mcp, newest first",
                       responses={200: AuditRecordSerializer(many=True), **READS}),
    retrieve=extend_schema(summary="One audit record", responses={200: AuditRecordSerializer, **ONE}),
)
class AuditRecordViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = AuditRecord.objects.all()
    serializer_class = AuditRecordSerializer
    permission_classes = DEFINITION_PERMISSIONS
    pagination_class = AuditPagination
    filterset_class = AuditRecordFilter
