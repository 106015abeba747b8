"""``/api/v1/providers/``: the third-party services users connect their accounts at (issue 42,
``connections.Provider``), with the same authentication, staff-only model permissions, throttles
and cursor pagination as the definitions. A provider's URLs and secret variable are checked as in
the admin (``Provider.clean``: outbound rules, the env-var rule); its secret is a variable's
name, never a value, and no connected token is ever part of an answer.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as ModelValidationError
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, viewsets

from connections.models import Provider

from .auth import DEFINITION_PERMISSIONS
from .bodies import StrictBodyMixin
from .pagination import DefinitionCursorPagination
from .parsers import FIELD_MAPPING
from .views import LISTING, ONE, READS, WRITES


class ProviderPagination(DefinitionCursorPagination):
    ordering = ("slug", "id")


class ProviderSerializer(StrictBodyMixin, serializers.ModelSerializer):
    serializer_field_mapping = FIELD_MAPPING

    class Meta:
        model = Provider
        fields = ("id", "slug", "name", "kind", "enabled", "authorization_url", "token_url", "revocation_url",
                  "resource", "scopes", "client_id", "client_secret_env", "created_at", "updated_at")
        read_only_fields = ("created_at", "updated_at")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        candidate = Provider(**{**({f: getattr(self.instance, f) for f in self.Meta.fields
                                    if f not in ("id", "created_at", "updated_at")} if self.instance else {}),
                                **attrs})
        try:
            candidate.clean()
        except ModelValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        return attrs


URLS = ("Its URLs must pass the outbound rules (REGISTRY_HTTP_ALLOWED_HOSTS; public addresses while "
        "REGISTRY_HTTP_FORBID_PRIVATE is on); `client_secret_env` names an environment variable the http "
        "kind's rule allows, never a value. `kind` `token_exchange` (RFC 8693) needs `resource` and a "
        "secret, no authorization URL. A member that is no field is a 400 naming it.")


@extend_schema_view(
    list=extend_schema(summary="List providers", responses={200: ProviderSerializer(many=True), **READS},
                       description="The third-party services users connect their own accounts at, so "
                       f"http tools can call them as each user. {LISTING}"),
    retrieve=extend_schema(summary="One provider", responses={200: ProviderSerializer, **ONE},
                           description="One third-party service: its authorization, token and revocation "
                           "URLs, scopes, client id and the variable holding its secret."),
    create=extend_schema(summary="Add a provider", responses={201: ProviderSerializer, **WRITES},
                         description=f"Add a service users can connect their accounts at. {URLS}"),
    update=extend_schema(summary="Replace a provider", responses={200: ProviderSerializer, **WRITES},
                         description=f"Replace every field of a provider; connected accounts stay. {URLS}"),
    partial_update=extend_schema(summary="Change fields of a provider",
                                 responses={200: ProviderSerializer, **WRITES},
                                 description=f"Change the fields sent of a provider; connected accounts "
                                 f"stay. {URLS}"),
    destroy=extend_schema(summary="Delete a provider and every account connected at it",
                          responses={204: None, **ONE},
                          description="Delete a provider: every account connected at it is forgotten "
                          "here, and tools naming it answer that it is not configured."),
)
class ProviderViewSet(viewsets.ModelViewSet):
    queryset = Provider.objects.all()
    serializer_class = ProviderSerializer
    permission_classes = DEFINITION_PERMISSIONS
    pagination_class = ProviderPagination
