"""Cursor pagination of the listings: stable under concurrent inserts and deletes (an offset
would skip or repeat rows), with opaque ``next`` / ``previous`` links. ``?page_size=`` up to 500;
the order is the viewset's ``ordering`` or the client's ``?ordering=``."""

from __future__ import annotations

from rest_framework.pagination import CursorPagination


class DefinitionCursorPagination(CursorPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 500
