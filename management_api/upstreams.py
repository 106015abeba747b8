"""``/api/v1/upstreams/``: upstream MCP servers (issue 40 item 5), by id, with ETag and ``If-Match``.

A body holds the connection (``name``, ``prefix``, ``url``, ``transport``), ``auth`` as one object
(``{"kind": "none"}``; ``{"kind": "header", "header": "Authorization", "env": "UPSTREAM_X_TOKEN"}``;
``{"kind": "client_credentials", "token_url", "client_id", "env", "scopes"}``; as the user,
``{"kind": "user", "connection": "<provider slug>", "listing": <one of the three>}``: each
caller's own token at that provider, the sync listing with ``listing``'s credential), the limits
(``timeout``, ``connect_timeout``, ``max_concurrency``) and the sync (``sync_interval``,
``review_syncs``, ``enabled``). ``env`` is the NAME of an environment variable: a body that
carries a secret value (a ``value``, ``token``, ``secret``… member, or an ``env`` that is no
variable name) is a 400, so no secret is ever stored or echoed back. The health fields are the
sync's, read-only. Validated as the admin validates (``Upstream.clean``: the URL through the
outbound rules, the variable through the http kind's allow-list).

The actions (``upstream_views.py``): ``POST <id>/sync``, ``POST <id>/sync/approve``,
``POST <id>/test``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field, extend_schema_serializer
from drf_spectacular.utils import extend_schema_view as document
from rest_framework import filters, serializers, viewsets

from registry.kinds.http_client.upstream_rules import ENV_NAME
from registry.models import Upstream

from . import filters as registry_filters
from .auth import DEFINITION_PERMISSIONS
from .authors import AuthoredMixin
from .errors import Conflict
from .pagination import DefinitionCursorPagination
from .serializers import DefinitionSerializer
from .upstream_views import UpstreamActionsMixin
from .versioning import VersionedViewSetMixin
from .views import IF_MATCH, LISTING, PRECONDITION, _answers

AUTH_MEMBERS = {
    "none": {"kind"},
    "header": {"kind", "header", "env"},
    "client_credentials": {"kind", "token_url", "client_id", "env", "scopes"},
    "user": {"kind", "connection", "listing"},
}
LISTING_KINDS = ("none", "header", "client_credentials")
# Members a caller might put a secret in: named in the refusal, never stored.
SECRET_MEMBERS = frozenset({"value", "token", "secret", "client_secret", "password", "api_key", "key",
                            "bearer", "authorization", "credentials"})
HEALTH = ("health", "health_detail", "last_sync_at", "last_sync_ok_at", "latency_ms", "server_info")


def _auth_schema(kind: str, required: list[str], **properties: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": ["kind", *required],
            "properties": {"kind": {"type": "string", "enum": [kind]}, **properties}}


ENV_SCHEMA = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
              "description": "The NAME of an environment variable holding the secret (never the secret)."}
LISTING_SCHEMA = {"oneOf": [
    _auth_schema("none", []),
    _auth_schema("header", ["env"], header={"type": "string", "default": "Authorization"}, env=ENV_SCHEMA),
    _auth_schema("client_credentials", ["token_url", "client_id", "env"],
                 token_url={"type": "string", "format": "uri"}, client_id={"type": "string"}, env=ENV_SCHEMA,
                 scopes={"type": "array", "items": {"type": "string"}}),
]}
AUTH_SCHEMA = {"oneOf": [
    *LISTING_SCHEMA["oneOf"],
    _auth_schema("user", ["connection"], connection={"type": "string", "description": "A provider's slug."},
                 listing={**LISTING_SCHEMA, "description": "How the sync lists it (no user then)."}),
]}


def _credential(row: Upstream, kind: str) -> dict[str, Any]:
    """The credential of ``kind`` as the row's header/OAuth columns hold it."""
    if kind == "header":
        return {"kind": "header", "header": row.auth_header, "env": row.auth_secret_env}
    if kind == "client_credentials":
        return {"kind": "client_credentials", "token_url": row.oauth_token_url,
                "client_id": row.oauth_client_id, "env": row.auth_secret_env,
                "scopes": list(row.oauth_scopes or [])}
    return {"kind": "none"}


@extend_schema_field(AUTH_SCHEMA)
class AuthField(serializers.JSONField):
    """The ``auth`` object ↔ the row's ``auth``, ``auth_header``, ``auth_secret_env``,
    ``oauth_token_url``, ``oauth_client_id`` and ``oauth_scopes`` columns."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(source="*", **kwargs)

    def to_representation(self, row: Upstream) -> dict[str, Any]:
        if row.auth == "user":
            return {"kind": "user", "connection": row.connection,
                    "listing": _credential(row, row.sync_auth)}
        return _credential(row, row.auth)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        data = super().to_internal_value(data)
        if isinstance(data, dict) and data.get("kind") == "user":
            return self._user(data)
        found = self._credential(data, AUTH_MEMBERS)
        return {**found, "connection": "", "sync_auth": "none"}

    def _user(self, data: dict[str, Any]) -> dict[str, Any]:
        """``{"kind": "user", "connection", "listing"}`` → ``auth`` "user", the provider's slug and
        the listing credential's columns (``sync_auth`` and the shared header/OAuth columns)."""
        self._check_members(data, "user")
        connection = data.get("connection", "")
        if not isinstance(connection, str) or not connection:
            raise serializers.ValidationError("'connection' is a connection provider's slug.")
        listing = self._credential(data.get("listing", {"kind": "none"}),
                                   {k: AUTH_MEMBERS[k] for k in LISTING_KINDS})
        return {**listing, "auth": "user", "sync_auth": listing["auth"], "connection": connection}

    def _check_members(self, data: dict[str, Any], kind: str) -> None:
        secrets = sorted(set(data) & SECRET_MEMBERS)
        if secrets:
            raise serializers.ValidationError(
                f"{', '.join(secrets)}: a secret value is never accepted. Put it in an environment "
                "variable of the server and give that variable's name in 'env'.")
        unknown = sorted(set(data) - AUTH_MEMBERS[kind])
        if unknown:
            raise serializers.ValidationError(
                f"Unknown member(s) {', '.join(unknown)} for {kind} auth: it takes "
                f"{', '.join(sorted(AUTH_MEMBERS[kind]))}.")

    def _credential(self, data: Any, kinds: dict[str, set[str]]) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise serializers.ValidationError(
                f'An object: {{"kind": {" | ".join(repr(k) for k in kinds)}, …}}.'.replace("'", '"'))
        kind = data.get("kind")
        if not isinstance(kind, str) or kind not in kinds:
            raise serializers.ValidationError(
                f"Unknown auth kind {kind!r}: one of {', '.join(kinds)}.")
        self._check_members(data, kind)
        env = data.get("env", "")
        if not isinstance(env, str) or (env and not ENV_NAME.fullmatch(env)):
            # Checked here as well as in clean(): the message must not echo what may be a secret.
            raise serializers.ValidationError(
                "'env' is the NAME of an environment variable (letters, digits, _), not its value: the "
                "secret itself is never stored.")
        scopes = data.get("scopes", [])
        if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
            raise serializers.ValidationError("'scopes' is a list of strings.")
        for name in ("header", "token_url", "client_id"):
            if not isinstance(data.get(name, ""), str):
                raise serializers.ValidationError(f"'{name}' is a string.")
        return {
            "auth": kind,
            "auth_header": data.get("header", "Authorization") if kind == "header" else "Authorization",
            "auth_secret_env": env if kind != "none" else "",
            "oauth_token_url": data.get("token_url", "") if kind == "client_credentials" else "",
            "oauth_client_id": data.get("client_id", "") if kind == "client_credentials" else "",
            "oauth_scopes": scopes if kind == "client_credentials" else [],
        }


@extend_schema_serializer(examples=[OpenApiExample("A vendor's server", request_only=True, value={
    "name": "vendor", "prefix": "vnd", "url": "https://mcp.vendor.example/mcp", "transport": "auto",
    "auth": {"kind": "header", "header": "Authorization", "env": "MCP_TOOL_SECRET_VENDOR"},
    "timeout": 30, "max_concurrency": 16, "sync_interval": 300, "review_syncs": True})])
class UpstreamSerializer(DefinitionSerializer):
    auth = AuthField(required=False, help_text=(
        'How we authenticate: {"kind": "none"}, {"kind": "header", "header", "env"} or '
        '{"kind": "client_credentials", "token_url", "client_id", "env", "scopes"} or, as each caller, '
        '{"kind": "user", "connection": "<provider slug>", "listing": <one of the others, for the sync>}; '
        '"env" names an environment variable (never a secret value).'))
    mirrored = serializers.SerializerMethodField(
        help_text="How many definitions are mirrored from it, per kind, and how many of them are missing.")

    class Meta:
        model = Upstream
        fields = (
            "id", "name", "prefix", "url", "transport", "auth", "timeout", "connect_timeout",
            "max_concurrency", "sync_interval", "review_syncs", "enabled", *HEALTH, "mirrored",
            "version", "created_at", "updated_at",
        )
        read_only_fields = ("id", *HEALTH, "version", "created_at", "updated_at")

    def get_mirrored(self, row: Upstream) -> dict[str, int]:
        from registry.upstream_actions import mirrored_counts

        return mirrored_counts(row)


ABOUT = ("`prefix` names what it mirrors: `<prefix>_<name>`. `url` must pass the outbound rules "
         "(its host in REGISTRY_HTTP_ALLOWED_HOSTS; no private address with REGISTRY_HTTP_FORBID_PRIVATE), "
         "unless the upstream is disabled. `auth.env` names an environment variable allowed as the http "
         "kind's secrets are; a secret value in the body is a 400.")


@document(
    list=extend_schema(summary="List upstream MCP servers",
                       description=f"The upstreams, by name, with their health. {LISTING}",
                       responses=_answers(UpstreamSerializer(many=True), 200, 400, 404)),
    retrieve=extend_schema(summary="One upstream (ETag: its version)",
                           description="One upstream, by id, with its health and mirrored counts. The "
                           "`ETag` header is its version: send it back in `If-Match` on a write.",
                           responses=_answers(UpstreamSerializer, 200, 404)),
    create=extend_schema(summary="Add an upstream MCP server",
                         description=f"Add an upstream; nothing is mirrored until it is synced. {ABOUT}",
                         responses=_answers(UpstreamSerializer, 201, 400, 409)),
    update=extend_schema(summary="Replace an upstream", parameters=[IF_MATCH],
                         description=f"Replace an upstream whole. {ABOUT} {PRECONDITION}",
                         responses=_answers(UpstreamSerializer, 200, 400, 404, 409, 412)),
    partial_update=extend_schema(summary="Change fields of an upstream", parameters=[IF_MATCH],
                                 description=f"Change the fields sent. {ABOUT} {PRECONDITION}",
                                 responses=_answers(UpstreamSerializer, 200, 400, 404, 409, 412)),
    destroy=extend_schema(summary="Delete an upstream and its mirrored definitions", parameters=[IF_MATCH],
                          description="Delete an upstream and, in the same change set, every definition "
                          f"mirrored from it (clients hear `list_changed`). {PRECONDITION}",
                          responses=_answers(None, 204, 400, 404, 412)),
)
class UpstreamViewSet(AuthoredMixin, UpstreamActionsMixin, VersionedViewSetMixin, viewsets.ModelViewSet):
    queryset = Upstream.objects.all()
    serializer_class = UpstreamSerializer
    permission_classes = DEFINITION_PERMISSIONS
    pagination_class = DefinitionCursorPagination
    filter_backends = (filters.SearchFilter, registry_filters.StrictOrderingFilter)
    ordering_fields = ("name", "prefix", "created_at", "updated_at")
    ordering = ("name",)
    search_fields = ("name", "prefix", "url")

    @staticmethod
    def _taken() -> Exception:
        return Conflict("Another writer committed an upstream with the same name or prefix first; retry.")
