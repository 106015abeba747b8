"""``/api/v1/oauth-grants/``: what users authorized the built-in authorization server's clients to
do (``oauth_server``, ``MCP_OAUTH_ISSUER=self``), for staff. A grant is a live refresh token: its
user, client, scopes and RFC 8707 resources; ``DELETE`` revokes it with every token rotated from
the same authorization (its family). ``?user=`` (a username), ``?client_id=``, newest first.
"""

from __future__ import annotations

from typing import Any

from django_filters import rest_framework as django_filters
from drf_spectacular.utils import extend_schema, extend_schema_view
from oauth2_provider.models import get_refresh_token_model
from rest_framework import mixins, serializers, viewsets

from oauth_server.models import record
from oauth_server.revocations import revoke

from .auth import DEFINITION_PERMISSIONS
from .filters import StrictFilterSet
from .pagination import DefinitionCursorPagination
from .views import LISTING, ONE, READS

RefreshToken = get_refresh_token_model()


class GrantPagination(DefinitionCursorPagination):
    ordering = ("-created", "-id")


class OAuthGrantSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    user = serializers.CharField(source="user.get_username", read_only=True)
    client_id = serializers.CharField(source="application.client_id", read_only=True)
    client_name = serializers.CharField(source="application.name", read_only=True)
    scope = serializers.SerializerMethodField()

    class Meta:
        model = RefreshToken
        fields = ("id", "user", "client_id", "client_name", "scope", "resource", "created")
        read_only_fields = fields

    def get_scope(self, token: Any) -> str:
        return str(token.access_token.scope) if token.access_token is not None else ""


class OAuthGrantFilter(StrictFilterSet):
    user = django_filters.CharFilter(field_name="user__username")
    client_id = django_filters.CharFilter(field_name="application__client_id")

    class Meta:
        model = RefreshToken
        fields = ("user", "client_id")


@extend_schema_view(
    list=extend_schema(
        summary="What users authorized OAuth clients to do, newest first",
        responses={200: OAuthGrantSerializer(many=True), **READS},
        description="The live grants of the built-in authorization server: each a refresh token, "
        f"with its user, client, scopes and resources. `?user=`, `?client_id=`. {LISTING}",
    ),
    retrieve=extend_schema(summary="One grant", responses={200: OAuthGrantSerializer, **ONE},
                           description="One live grant: which user let which client do what, since when."),
    destroy=extend_schema(
        summary="Revoke a grant and every token rotated from it", responses={204: None, **ONE},
        description="Revoke a grant: its refresh token, every token rotated from the same "
        "authorization, and the access tokens /mcp accepts for it. The client must ask the user again.",
    ),
)
class OAuthGrantViewSet(mixins.DestroyModelMixin, viewsets.ReadOnlyModelViewSet):  # type: ignore[misc]
    queryset = RefreshToken.objects.filter(revoked__isnull=True).select_related(
        "user", "application", "access_token"
    )
    serializer_class = OAuthGrantSerializer
    permission_classes = DEFINITION_PERMISSIONS
    pagination_class = GrantPagination
    filterset_class = OAuthGrantFilter

    def perform_destroy(self, instance: Any) -> None:
        revoke(instance.user_id, instance.application.client_id)  # its access tokens too, on /mcp
        if instance.token_family:
            RefreshToken.revoke_family(instance.token_family)
        else:
            instance.revoke()
        record(
            "revoked",
            user=self.request.user,
            client_id=instance.application.client_id,
            detail=f"grant {instance.pk} revoked through the API",
        )
