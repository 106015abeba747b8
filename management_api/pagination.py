"""Cursor pagination of the listings: stable under concurrent inserts and deletes (an offset
would skip or repeat rows), with opaque ``next`` / ``previous`` links. ``?page_size=`` up to 500;
the order is the viewset's ``ordering`` or the client's ``?ordering=``.

Every page also says ``count``: how many rows match the request's filters, on all pages. It costs
one ``COUNT(*)`` query per page, over the filtered rows (an index scan on the tables here, which
hold thousands of rows, not millions); a cursor alone cannot tell a client how far it is.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response


class DefinitionCursorPagination(CursorPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 500
    count: int | None = None

    def paginate_queryset(self, queryset: QuerySet[Any], request: Request, view: Any = None) -> Any:
        page = super().paginate_queryset(queryset, request, view)  # a bad cursor: 404, nothing counted
        self.count = queryset.count()
        return page

    def get_paginated_response(self, data: Any) -> Response:
        return Response(
            {
                "count": self.count,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        document = super().get_paginated_response_schema(schema)
        document["properties"] = {
            "count": {
                "type": "integer",
                "example": 123,
                "description": "How many rows match the filters, on all pages.",
            },
            **document["properties"],
        }
        document["required"] = ["count", *document.get("required", [])]
        return document
