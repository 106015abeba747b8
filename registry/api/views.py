"""CRUD viewsets of the four definitions: ``/api/v1/tools/``, ``resources/``,
``resource-templates/``, ``prompts/``.

Each write is one transaction (``versioning.VersionedViewSetMixin``), so a prompt and its
arguments and messages are one change, published once after commit like an admin save. Listings
are filtered, searched, ordered and cursor-paginated, in a constant number of queries whatever
the page size (a prompt page prefetches its arguments and messages: three queries).
"""

from __future__ import annotations

from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import filters, viewsets

from ..models import Prompt, Resource, ResourceTemplate, Tool
from . import filters as registry_filters
from .auth import DEFINITION_PERMISSIONS
from .pagination import DefinitionCursorPagination
from .serializers import PromptSerializer, ResourceSerializer, ResourceTemplateSerializer, ToolSerializer
from .versioning import VersionedViewSetMixin

IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description='The ETag of the version this write is based on (e.g. "3"); if the object has '
    "changed since, the answer is 412 and nothing is written. Optional: without it the write "
    "is accepted.",
)
ERRORS = {
    400: OpenApiTypes.OBJECT,
    401: OpenApiTypes.OBJECT,
    403: OpenApiTypes.OBJECT,
    404: OpenApiTypes.OBJECT,
    409: OpenApiTypes.OBJECT,
    412: OpenApiTypes.OBJECT,
    429: OpenApiTypes.OBJECT,
}


def _documented(name: str, serializer: type) -> object:
    writes = {code: body for code, body in ERRORS.items()}
    return extend_schema_view(
        list=extend_schema(summary=f"List {name}", responses={200: serializer(many=True), 401: ERRORS[401],
                                                             403: ERRORS[403], 429: ERRORS[429]}),
        retrieve=extend_schema(summary=f"One of the {name} (ETag: its version)",
                               responses={200: serializer, 401: ERRORS[401], 403: ERRORS[403],
                                          404: ERRORS[404]}),
        create=extend_schema(summary=f"Create one of the {name}",
                             responses={201: serializer, **{k: v for k, v in writes.items() if k < 409}}),
        update=extend_schema(summary=f"Replace one of the {name}", parameters=[IF_MATCH],
                             responses={200: serializer, **writes}),
        partial_update=extend_schema(summary=f"Change fields of one of the {name}", parameters=[IF_MATCH],
                                     responses={200: serializer, **writes}),
        destroy=extend_schema(summary=f"Delete one of the {name}", parameters=[IF_MATCH],
                              responses={204: None, **{k: v for k, v in writes.items() if k != 400}}),
    )


class DefinitionViewSet(VersionedViewSetMixin, viewsets.ModelViewSet):
    permission_classes = DEFINITION_PERMISSIONS
    pagination_class = DefinitionCursorPagination
    filter_backends = (DjangoFilterBackend, filters.SearchFilter, filters.OrderingFilter)
    ordering_fields = ("name", "created_at", "updated_at")
    ordering = ("name",)
    search_fields = ("name", "title", "description")


@_documented("tools", ToolSerializer)
class ToolViewSet(DefinitionViewSet):
    queryset = Tool.objects.all()
    serializer_class = ToolSerializer
    filterset_class = registry_filters.ToolFilter


@_documented("resources", ResourceSerializer)
class ResourceViewSet(DefinitionViewSet):
    queryset = Resource.objects.all()
    serializer_class = ResourceSerializer
    filterset_class = registry_filters.ResourceFilter
    ordering_fields = ("uri", "name", "created_at", "updated_at")
    ordering = ("uri",)
    search_fields = ("uri", "name", "title", "description")


@_documented("resource templates", ResourceTemplateSerializer)
class ResourceTemplateViewSet(DefinitionViewSet):
    queryset = ResourceTemplate.objects.all()
    serializer_class = ResourceTemplateSerializer
    filterset_class = registry_filters.ResourceTemplateFilter
    search_fields = ("name", "uri_template", "title", "description")


@_documented("prompts", PromptSerializer)
class PromptViewSet(DefinitionViewSet):
    queryset = Prompt.objects.prefetch_related("arguments", "messages")
    serializer_class = PromptSerializer
    filterset_class = registry_filters.PromptFilter
