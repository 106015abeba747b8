"""Listing filters (``django-filter``): ``?name=`` (exact), ``?enabled=true|false``, ``?kind=``,
plus ``?search=`` (DRF's ``SearchFilter``: words in the name, title, description or URI) and
``?ordering=`` (DRF's ``OrderingFilter``), declared per viewset in ``views.py``."""

from __future__ import annotations

from django_filters import rest_framework as django_filters

from registry.models import Prompt, Resource, ResourceTemplate, Tool


class ToolFilter(django_filters.FilterSet):
    class Meta:
        model = Tool
        fields = ("name", "enabled", "kind")


class ResourceFilter(django_filters.FilterSet):
    class Meta:
        model = Resource
        fields = ("name", "uri", "enabled", "kind", "mime_type")


class ResourceTemplateFilter(django_filters.FilterSet):
    class Meta:
        model = ResourceTemplate
        fields = ("name", "enabled", "kind")


class PromptFilter(django_filters.FilterSet):
    class Meta:
        model = Prompt
        fields = ("name", "enabled")
