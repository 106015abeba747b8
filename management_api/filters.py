"""Listing filters (``django-filter``): ``?name=`` (exact), ``?enabled=true|false``, ``?kind=``,
plus ``?search=`` (DRF's ``SearchFilter``: words in the name, title, description or URI) and
``?ordering=`` (DRF's ``OrderingFilter``), declared per viewset in ``views.py``.

A value a filter cannot take is a 400 that names the parameter and the values it takes. Left to
themselves, django-filter reads ``?enabled=maybe`` as no filter at all (its boolean widget maps
any other word to "unknown"), and DRF drops an ``?ordering=`` field it does not know: both
answered every row, as if the client had asked for them.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet
from django_filters import rest_framework as django_filters
from django_filters.widgets import BooleanWidget
from rest_framework import exceptions, filters
from rest_framework.request import Request

from registry.models import Prompt, Resource, ResourceTemplate, Tool, VirtualServer

BOOLEAN_WORDS = ("true", "false", "1", "0")  # what django-filter's BooleanWidget reads


class StrictFilterForm(forms.Form):
    """The form of a ``StrictFilterSet``: its errors say the parameter and its allowed values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():
            if isinstance(field, forms.ChoiceField):
                allowed = ", ".join(str(value) for value, _ in field.choices if value not in ("", None))
                field.error_messages["invalid_choice"] = f"?{name}= takes one of {allowed}; not %(value)r."

    def clean(self) -> dict[str, Any]:
        for name, field in self.fields.items():
            raw = self.data.get(self.add_prefix(name))
            if isinstance(field.widget, BooleanWidget) and raw not in (None, "") and (
                    str(raw).lower() not in BOOLEAN_WORDS):
                self.add_error(name, f"?{name}= takes true or false (or 1 or 0); not {raw!r}.")
        return super().clean()


class StrictFilterSet(django_filters.FilterSet):
    """A ``FilterSet`` whose bad values are errors (400) that name the parameter and its values."""

    def get_form_class(self) -> type[forms.Form]:
        form: type[forms.Form] = super().get_form_class()
        return type(form.__name__, (StrictFilterForm, form), {})


class StrictOrderingFilter(filters.OrderingFilter):
    """DRF's ``OrderingFilter``, refusing (400) a field it cannot order by instead of ignoring it."""

    def remove_invalid_fields(self, queryset: QuerySet[Any], fields: list[str], view: Any,
                              request: Request) -> list[str]:
        valid = [name for name, _ in self.get_valid_fields(queryset, view, {"request": request})]
        wrong = [term for term in fields if term.lstrip("-") not in valid]
        if wrong:
            raise exceptions.ValidationError({self.ordering_param: [
                f"?{self.ordering_param}= takes {', '.join(valid)} (a - before one for descending, "
                f"several separated by commas); not {', '.join(repr(w) for w in wrong)}."]})
        return fields


class ToolFilter(StrictFilterSet):
    class Meta:
        model = Tool
        fields = ("name", "enabled", "kind")


class ResourceFilter(StrictFilterSet):
    class Meta:
        model = Resource
        fields = ("name", "uri", "enabled", "kind", "mime_type")


class ResourceTemplateFilter(StrictFilterSet):
    class Meta:
        model = ResourceTemplate
        fields = ("name", "enabled", "kind")


class PromptFilter(StrictFilterSet):
    class Meta:
        model = Prompt
        fields = ("name", "enabled")


class VirtualServerFilter(StrictFilterSet):
    class Meta:
        model = VirtualServer
        fields = ("slug", "name", "enabled")
