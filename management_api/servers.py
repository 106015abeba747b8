"""``/api/v1/servers/``: virtual servers (issue 39), each served at ``/mcp/<slug>``, addressed by
slug.

A body holds the server as clients see it (``name``, ``title``, ``version`` — serverInfo.version,
stored as ``server_version`` —, ``instructions``, …), its selection (``tools``, ``resources``,
``resource_templates``, ``prompts``, ``skills``: lists of names or URIs; ``include_tags``,
``exclude_tags``) and its access (``auth_modes``, ``api_keys``, ``oauth_scopes``,
``rate_limit``). Validated as the admin validates it (the model's ``full_clean``), plus: an
explicit name that no row and no definition in code holds is a 400 on its field
(``registry.server_selection.unknown_names``).

The row's counter of optimistic concurrency is ``revision`` here (``version`` is the server's
serverInfo.version): the ETag, and what ``If-Match`` names (``versioning.py``). An answer also
shows the endpoint's absolute ``url`` and its ``members``: what the selection resolves to now
(enabled definitions, tags applied), from a snapshot built once per request.
"""

from __future__ import annotations

import functools
from typing import Any

from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field, extend_schema_serializer
from drf_spectacular.utils import extend_schema_view as document
from rest_framework import filters, serializers, viewsets

from registry.models import VirtualServer
from registry.server_selection import current_snapshot, members, readable_kinds, unknown_names

from . import filters as registry_filters
from .auth import DEFINITION_PERMISSIONS
from .authors import AuthoredMixin
from .errors import Conflict
from .pagination import DefinitionCursorPagination
from .serializers import DefinitionSerializer
from .versioning import VersionedViewSetMixin
from .views import IF_MATCH, LISTING, PRECONDITION, _answers


def _names(what: str) -> serializers.ListField:
    # Not required: a kind the caller may not read is left out.
    return serializers.ListField(child=serializers.CharField(), required=False, help_text=what)


class MembersSerializer(serializers.Serializer):
    """What the selection resolves to now (for the OpenAPI document: ``members`` is computed)."""

    tools = _names("Tool names.")
    resources = _names("Resource URIs.")
    resource_templates = _names("URI templates.")
    prompts = _names("Prompt names.")
    skills = _names("Skill root URIs.")


@extend_schema_serializer(examples=[OpenApiExample("A support server", request_only=True, value={
    "slug": "support", "name": "support", "title": "Support desk", "version": "1.0.0",
    "instructions": "Look the customer up before answering.", "tools": ["lookup_customer"],
    "include_tags": ["support"], "exclude_tags": ["internal"], "auth_modes": ["keys"]})])
class VirtualServerSerializer(DefinitionSerializer):
    version = serializers.CharField(source="server_version", max_length=64, required=False,
                                    help_text="serverInfo.version, as clients see it (default 1.0.0).")
    revision = serializers.IntegerField(source="version", read_only=True,
                                        help_text="The row's version: its ETag, for If-Match.")
    url = serializers.SerializerMethodField(help_text="The endpoint's absolute URL: /mcp/<slug>.")
    members = serializers.SerializerMethodField(
        help_text="What the selection serves now: enabled definitions named or tagged, excluded tags "
        "left out (before a caller's grant). Only the kinds you may view are shown.")

    class Meta:
        model = VirtualServer
        fields = (
            "id", "slug", "name", "title", "version", "description", "instructions", "icons",
            "website_url", "enabled", "tools", "resources", "resource_templates", "prompts", "skills",
            "include_tags", "exclude_tags", "auth_modes", "api_keys", "oauth_scopes", "rate_limit",
            "tool_search", "tool_search_threshold", "search_tool_name", "call_tool_name",
            "url", "members", "revision", "created_at", "updated_at",
        )
        read_only_fields = ("id", "created_at", "updated_at")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)  # the model's rules (slug, auth modes, rate, …)
        unknown = unknown_names(attrs, self.instance)
        if unknown:
            raise serializers.ValidationError({field: [message] for field, message in unknown.items()})
        return attrs

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, row: VirtualServer) -> str:
        path = f"/mcp/{row.slug}"
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path

    @extend_schema_field(MembersSerializer)
    def get_members(self, row: VirtualServer) -> dict[str, list[str]]:
        snapshot = self.context.get("snapshot") or current_snapshot
        request = self.context.get("request")
        # A server's view permission is not a tool's: names of kinds the caller may not read stay out.
        readable = readable_kinds(request.user) if request is not None else frozenset()
        return {kind: names for kind, names in members(row, snapshot()).items() if kind in readable}


ABOUT = ("A virtual server is its own MCP server at `/mcp/<slug>`: its serverInfo (`name`, `title`, "
         "`version`), `instructions`, and what it serves: the definitions named in `tools`, `resources` "
         "(URIs), `resource_templates` (template texts), `prompts` and `skills` (root URIs), plus those "
         "carrying one of `include_tags`, minus those carrying one of `exclude_tags` (that wins). A name "
         "that no definition (row or code) holds is a 400 on its field. `auth_modes` (among open, keys, "
         "oauth), `api_keys` (key prefixes), `oauth_scopes` and `rate_limit` (N/S) say who may use it. "
         "`tool_search` (off, on, auto above `tool_search_threshold` tools in the caller's view) "
         "lists only the meta-tools `search_tool_name` and `call_tool_name` and the pinned tools "
         "(docs/guides/tool-search.md).")
EDIT = " Its clients hear `list_changed` when what it serves changes."


@document(
    list=extend_schema(
        summary="List virtual servers",
        description=f"The virtual servers, by slug, each with its `url` and current `members`. {LISTING}",
        responses=_answers(VirtualServerSerializer(many=True), 200, 400, 404)),
    retrieve=extend_schema(
        summary="One virtual server, by slug (ETag: its revision)",
        description="One virtual server, by its slug, with its `url` and its current `members`. The "
        "`ETag` header is its `revision`: send it back in `If-Match` on a write so that the write fails "
        "(412) if someone changed it in between.",
        responses=_answers(VirtualServerSerializer, 200, 404)),
    create=extend_schema(
        summary="Create a virtual server",
        description=f"Create a virtual server: it is served at `/mcp/<slug>` once enabled. {ABOUT}",
        responses=_answers(VirtualServerSerializer, 201, 400, 409)),
    update=extend_schema(
        summary="Replace a virtual server", parameters=[IF_MATCH],
        description=f"Replace a virtual server: the body is the whole server (`slug` and `name` "
        f"required; a new `slug` moves its endpoint). {ABOUT} "
        f"{PRECONDITION}{EDIT}",
        responses=_answers(VirtualServerSerializer, 200, 400, 404, 409, 412)),
    partial_update=extend_schema(
        summary="Change fields of a virtual server", parameters=[IF_MATCH],
        description=f"Change the fields sent of a virtual server; the others keep their values. A list "
        f"sent replaces the stored one. {PRECONDITION}{EDIT}",
        responses=_answers(VirtualServerSerializer, 200, 400, 404, 409, 412)),
    destroy=extend_schema(
        summary="Delete a virtual server", parameters=[IF_MATCH],
        description="Delete a virtual server: `/mcp/<slug>` answers 404 from then on, on every worker, "
        f"and its sessions end there. The definitions it served stay. {PRECONDITION}",
        responses=_answers(None, 204, 400, 404, 412)),
)
class VirtualServerViewSet(AuthoredMixin, VersionedViewSetMixin, viewsets.ModelViewSet):
    queryset = VirtualServer.objects.all()
    serializer_class = VirtualServerSerializer
    permission_classes = DEFINITION_PERMISSIONS
    pagination_class = DefinitionCursorPagination
    filter_backends = (DjangoFilterBackend, filters.SearchFilter, registry_filters.StrictOrderingFilter)
    filterset_class = registry_filters.VirtualServerFilter
    ordering_fields = ("slug", "name", "created_at", "updated_at")
    ordering = ("slug",)
    search_fields = ("slug", "name", "title", "description")
    lookup_field = "slug"
    etag_field = "revision"

    def get_serializer_context(self) -> dict[str, Any]:
        # One snapshot per request, built when an answer first shows `members` (a page of
        # servers shares it; a write builds it after its save, so it sees the edit).
        return {**super().get_serializer_context(), "snapshot": functools.cache(current_snapshot)}

    @staticmethod
    def _taken() -> Exception:
        return Conflict("Another writer committed a virtual server with the same slug first; retry.")
