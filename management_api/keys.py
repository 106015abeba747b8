"""``/api/v1/keys/``: API keys for ``/mcp`` in the REST management API (same authentication,
staff-only model permissions, throttles and cursor pagination as the definitions).

``POST keys/`` makes a key and answers its ``token`` once (never again: only its digest is kept);
``PATCH``/``PUT`` change its name, owner, expiry, grant or rates (every worker reloads it, and its
sessions get ``list_changed``); ``DELETE`` revokes it (204): keys are never deleted, so the audit
log keeps naming them. ``?status=active|expired|revoked``, ``?owner=<username>``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet
from django.utils import timezone
from django_filters import rest_framework as django_filters
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from access.models import ApiKey
from mcp_protocol.auth.keys import digest, new_token

from .auth import DEFINITION_PERMISSIONS
from .bodies import StrictBodyMixin
from .filters import StrictFilterSet
from .pagination import DefinitionCursorPagination
from .parsers import FIELD_MAPPING
from .views import LISTING, ONE, READS, WRITES


class KeyPagination(DefinitionCursorPagination):
    ordering = ("-created_at", "-id")


class ApiKeySerializer(StrictBodyMixin, serializers.ModelSerializer):
    owner = serializers.SlugRelatedField(slug_field="username", queryset=get_user_model().objects.all(),
                                         required=False, allow_null=True)
    status = serializers.CharField(read_only=True)
    serializer_field_mapping = FIELD_MAPPING

    class Meta:
        model = ApiKey
        fields = ("id", "name", "owner", "prefix", "status", "tools", "resources", "prompts", "tags",
                  "rate", "tool_rate", "expires_at", "created_at", "updated_at", "last_used_at",
                  "revoked_at")
        read_only_fields = ("prefix", "created_at", "updated_at", "last_used_at", "revoked_at")

    def create(self, validated: dict[str, Any]) -> ApiKey:
        token, prefix = new_token()
        key = ApiKey.objects.create(prefix=prefix, digest=digest(token), **validated)
        key._token = token  # type: ignore[attr-defined]  # answered once, by to_representation
        return key

    def to_representation(self, instance: ApiKey) -> dict[str, Any]:
        data: dict[str, Any] = super().to_representation(instance)
        token = getattr(instance, "_token", None)
        if token is not None:
            data["token"] = token
        return data


class ApiKeyFilter(StrictFilterSet):
    status = django_filters.ChoiceFilter(choices=[(s, s) for s in ("active", "expired", "revoked")],
                                         method="by_status")
    owner = django_filters.CharFilter(field_name="owner__username")

    class Meta:
        model = ApiKey
        fields = ("name", "prefix", "owner", "status")

    def by_status(self, queryset: QuerySet[ApiKey], name: str, value: str) -> QuerySet[ApiKey]:
        now = timezone.now()
        if value == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        if value == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        return queryset.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now), revoked_at__isnull=True)


GRANT = ("`tools`, `resources`, `prompts` (names; `[\"*\"]`: all) and `tags` say what the key may "
         "use; `rate` and `tool_rate` bound its requests. A member that is no field is a 400 naming it.")


@extend_schema_view(
    list=extend_schema(summary="List API keys of /mcp", responses={200: ApiKeySerializer(many=True), **READS},
                       description="The API keys MCP clients authenticate with on /mcp, newest first, "
                       "revoked ones included; `?status=active|expired|revoked`, `?owner=<username>`. "
                       f"{LISTING}"),
    retrieve=extend_schema(summary="One API key", responses={200: ApiKeySerializer, **ONE},
                           description="One API key of /mcp: what it grants, its status and when it was "
                           "last used. Its token is never shown again after its creation."),
    create=extend_schema(summary="Make an API key (its token is in this answer only)",
                         responses={201: ApiKeySerializer, **WRITES},
                         description="Make an API key for /mcp. The answer's `token` is the only time the "
                         f"token is shown: only its digest is stored. {GRANT}"),
    update=extend_schema(summary="Replace an API key's fields", responses={200: ApiKeySerializer, **WRITES},
                         description="Replace an API key's fields (its token stays). Every worker reloads "
                         f"it and its MCP sessions get `list_changed`. {GRANT}"),
    partial_update=extend_schema(summary="Change fields of an API key",
                                 responses={200: ApiKeySerializer, **WRITES},
                                 description="Change the fields sent of an API key (its token stays). Every "
                                 f"worker reloads it and its MCP sessions get `list_changed`. {GRANT}"),
    destroy=extend_schema(summary="Revoke an API key", responses={204: None, **ONE},
                          description="Revoke an API key: /mcp refuses it from now on, on every worker. "
                          "The row stays (revoked), so the audit log keeps naming it."),
)
class ApiKeyViewSet(viewsets.ModelViewSet):
    queryset = ApiKey.objects.select_related("owner")
    serializer_class = ApiKeySerializer
    permission_classes = DEFINITION_PERMISSIONS
    pagination_class = KeyPagination
    filterset_class = ApiKeyFilter

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        self.get_object().revoke()
        return Response(status=status.HTTP_204_NO_CONTENT)
