"""CRUD viewsets of the four definitions: ``/api/v1/tools/``, ``resources/``,
``resource-templates/``, ``prompts/``.

Each write is one transaction (``versioning.VersionedViewSetMixin``), so a prompt and its
arguments and messages are one change, published once after commit like an admin save. Listings
are filtered, searched, ordered and cursor-paginated, in a constant number of queries whatever
the page size (a prompt page prefetches its arguments and messages: three queries, and one
``COUNT`` for the page's ``count``). Bad filter values are 400s (``filters.py``); bodies hold
fields only (``bodies.py``).
"""

from __future__ import annotations

from typing import Any

from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import filters, viewsets

from registry.models import Prompt, Resource, ResourceTemplate, Tool

from . import filters as registry_filters
from .auth import DEFINITION_PERMISSIONS
from .authors import AuthoredMixin
from .bodies import aliases_of
from .pagination import DefinitionCursorPagination
from .serializers import PromptSerializer, ResourceSerializer, ResourceTemplateSerializer, ToolSerializer
from .versioning import VersionedViewSetMixin

IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description='The ETag of the version this write is based on, in double quotes as the ETag header '
    'gives it (e.g. "3"; several separated by commas, or *); if the object has changed since, the '
    "answer is 412 and nothing is written. An unquoted 3 is a 400; a weak W/\"3\" never matches "
    "(If-Match compares strongly). Optional: without it the write is accepted.",
)
ERROR = OpenApiTypes.OBJECT  # DRF's error body: {"detail": "..."} or {"field": ["..."]}


def _error(description: str, example: dict[str, Any]) -> OpenApiResponse:
    return OpenApiResponse(ERROR, description, [OpenApiExample(description, value=example)])


ERRORS = {
    400: _error("Field errors, as the admin reports them", {
        "input_schema": ["Not a valid JSON Schema 2020-12 at /properties/a/type: 'strin' is not valid "
                         "under any of the given schemas"],
        "messages": {"1": {"content": ["A text content block needs text."]}}}),
    401: _error("No or bad credentials", {"detail": "Invalid, expired or revoked token."}),
    403: _error("Not staff, or no permission", {
        "detail": "You do not have permission to perform this action."}),
    404: _error("No such object (or a cursor that is not ours)",
                {"detail": "No Tool matches the given query."}),
    409: _error("Another write committed while this one ran", {
        "detail": "Another writer committed first: tool 3 is at version 5, not 4."}),
    412: _error("If-Match names another version", {
        "detail": "If-Match '\"4\"' does not name the current version (\"5\")."}),
    429: _error("Throttled", {"detail": "Request was throttled. Expected available in 12 seconds."}),
}
COMMON = (401, 403, 429)  # every route: not authenticated, not allowed, throttled
# The responses of the API keys' and the audit log's routes (keys.py, audit.py).
READS = {code: ERRORS[code] for code in (400, 401, 403, 404, 429)}  # 404: an unknown cursor
ONE = {code: ERRORS[code] for code in (401, 403, 404, 429)}
WRITES = {code: ERRORS[code] for code in (400, 401, 403, 404, 429)}


def _answers(body: Any, *codes: int) -> dict[int, Any]:
    return {code: (body if code < 300 else ERRORS[code]) for code in (*codes, *COMMON)}


LISTING = ("A page at a time: `results`, `count` (how many match the filters, on every page) and the "
           "`next` / `previous` links (opaque cursors; `?page_size=` up to 500). A filter value that is "
           "not one of the allowed ones is a 400 naming the parameter and its allowed values.")
PRECONDITION = ('With `If-Match: "<version>"` (the ETag of the GET), it is done only if nobody changed '
                "it since: else 412 and nothing changes. An unquoted `If-Match: 3` is a 400 that "
                "shows the quoted form.")


def _body_rules(serializer: type) -> str:
    wire = aliases_of(serializer)
    names = f" MCP's own names of fields are taken in their place: {wire}." if wire else ""
    return ("Validated as the admin validates it; errors are a 400 keyed by field. A member that is "
            f"no field is a 400 naming it (read-only fields sent back are ignored).{names}")


def _documented(name: str, serializer: type, about: str = "") -> Any:
    """The six operations of a definition viewset, each with its own description. ``about``: what
    a client should know of this kind, said on the writes."""
    many = serializer(many=True)
    live = " Every connected MCP client sees the change (`list_changed`)."
    rules = f"{about} {_body_rules(serializer)}".strip()
    return extend_schema_view(
        # 400: a filter value that is not one of the choices; 404: a cursor that is not ours.
        list=extend_schema(summary=f"List {name}", description=f"The {name} of the registry. {LISTING}",
                           responses=_answers(many, 200, 400, 404)),
        retrieve=extend_schema(
            summary=f"One of the {name} (ETag: its version)",
            description=f"One of the {name}, by id. Its `ETag` header is its version: send it back in "
            "`If-Match` on a write so that the write fails (412) if someone changed it in between.",
            responses=_answers(serializer, 200, 404)),
        create=extend_schema(summary=f"Create one of the {name}",
                             description=f"Create one of the {name}. {rules}{live}",
                             responses=_answers(serializer, 201, 400, 409)),
        update=extend_schema(
            summary=f"Replace one of the {name}", parameters=[IF_MATCH],
            description=f"Replace one of the {name} whole: a field left out takes its default. {rules} "
            f"{PRECONDITION}{live}",
            responses=_answers(serializer, 200, 400, 404, 409, 412)),
        partial_update=extend_schema(
            summary=f"Change fields of one of the {name}", parameters=[IF_MATCH],
            description=f"Change the fields sent of one of the {name}; the others keep their values. "
            f"{rules} {PRECONDITION}{live}",
            responses=_answers(serializer, 200, 400, 404, 409, 412)),
        destroy=extend_schema(
            summary=f"Delete one of the {name}", parameters=[IF_MATCH],
            description=f"Delete one of the {name}. {PRECONDITION}{live}",
            responses=_answers(None, 204, 400, 404, 412)),
    )


class DefinitionViewSet(AuthoredMixin, VersionedViewSetMixin, viewsets.ModelViewSet):
    permission_classes = DEFINITION_PERMISSIONS
    pagination_class = DefinitionCursorPagination
    filter_backends = (DjangoFilterBackend, filters.SearchFilter, registry_filters.StrictOrderingFilter)
    ordering_fields: tuple[str, ...] = ("name", "created_at", "updated_at")
    ordering = ("name",)
    search_fields: tuple[str, ...] = ("name", "title", "description")


@_documented("tools", ToolSerializer, "A tool's `kind` says what a call does: `template` renders "
             "`template_text`, `http` calls `http_url`, `handler` runs a registered @tool_handler.")
class ToolViewSet(DefinitionViewSet):
    queryset = Tool.objects.all()
    serializer_class = ToolSerializer
    filterset_class = registry_filters.ToolFilter


@_documented("resources", ResourceSerializer, "A resource holds `text`, or `blob` (base64), or is "
             "read from a registered @resource_handler (`kind`).")
class ResourceViewSet(DefinitionViewSet):
    queryset = Resource.objects.all()
    serializer_class = ResourceSerializer
    filterset_class = registry_filters.ResourceFilter
    ordering_fields = ("uri", "name", "created_at", "updated_at")
    ordering = ("uri",)
    search_fields = ("uri", "name", "title", "description")


@_documented("resource templates", ResourceTemplateSerializer, "`uri_template` is an RFC 6570 "
             "template; `completions` offers values per variable.")
class ResourceTemplateViewSet(DefinitionViewSet):
    queryset = ResourceTemplate.objects.all()
    serializer_class = ResourceTemplateSerializer
    filterset_class = registry_filters.ResourceTemplateFilter
    search_fields = ("name", "uri_template", "title", "description")


@_documented("prompts", PromptSerializer, "`arguments` and `messages` are written with the prompt, "
             "in one request; a list sent replaces the stored one, in its order.")
class PromptViewSet(DefinitionViewSet):
    queryset = Prompt.objects.prefetch_related("arguments", "messages")
    serializer_class = PromptSerializer
    filterset_class = registry_filters.PromptFilter
