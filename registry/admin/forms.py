"""Admin forms: select boxes fed by the handler allow-list (the JSON editor widget, shared with the
access app's key pages, is ``mcp_django.widgets``).

Validation itself is the models' (field validators + ``clean()``), which ``ModelForm`` runs, so a
bad schema or URI shows as an error on its field exactly as the API and ``full_clean()`` report it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django import forms

from mcp_django.widgets import JSONEditorWidget

from .. import handlers
from ..models import Prompt, PromptMessage, Resource, ResourceTemplate, Tool

# The handlers of the conformance suite's fixture (``registry/mcp_handlers/conformance*.py``): dozens of
# names a project's operator has no use for, listed only once ``load_conformance`` made rows that
# use them.
CONFORMANCE_MODULES = "registry.mcp_handlers.conformance"


def conformance_loaded() -> bool:
    """Whether any row names a handler of the conformance fixture (``load_conformance`` ran)."""
    from ..models import Prompt, Resource, ResourceTemplate, Tool

    names = [
        name
        for family in handlers.FAMILIES
        for name in handlers.names(family)
        if handlers.get(family, name).__module__.startswith(CONFORMANCE_MODULES)
    ]
    return any(model.objects.filter(handler__in=names).exists()
               for model in (Tool, Resource, ResourceTemplate, Prompt))


def handler_choices(family: str, current: str = "") -> Callable[[], list[tuple[str, str]]]:
    """The project's handlers of ``family``; the conformance fixture's only when it is loaded (or
    when the row already names one, so it stays valid)."""

    def choices() -> list[tuple[str, str]]:
        listed = handlers.choices(family)
        conformance = [name for name, _ in listed
                       if handlers.get(family, name).__module__.startswith(CONFORMANCE_MODULES)]
        if conformance and not conformance_loaded():
            listed = [(name, label) for name, label in listed if name not in conformance or name == current]
        return [("", "---------"), *listed]

    return choices


class HandlerChoiceField(forms.ChoiceField):
    def __init__(self, family: str, **kwargs: Any) -> None:
        self.family = family
        super().__init__(choices=handler_choices(family), **kwargs)


def handler_field(family: str, label: str, help_text: str = "") -> forms.ChoiceField:
    return HandlerChoiceField(
        family,
        required=False,
        label=label,
        help_text=help_text or f"Registered in code with @{family}_handler.",
    )


class VersionedForm(forms.ModelForm):
    """Refuses to save over an edit that committed after this form was opened.

    The form carries the row's ``version`` in a hidden field; if the stored row has moved on when
    the form comes back, the save is refused with the fields where the stored row now differs
    from the form, instead of silently overwriting the other edit. A save racing past this check
    still meets the model's guard (``concurrency.VersionConflict``, handled by the admin). A post
    without the field (a script) is accepted, like a REST write without ``If-Match``.
    """

    # Not named "version": the admin may not list a non-editable model field in its fieldsets.
    opened_version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.initial["opened_version"] = self.instance.version
        for name, field in self.fields.items():
            if isinstance(field, HandlerChoiceField):  # the row's own handler stays a choice
                field.choices = handler_choices(field.family, getattr(self.instance, name, "") or "")

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean()
        opened = cleaned.get("opened_version")
        if self.instance.pk is None or opened is None or opened == self.instance.version:
            return cleaned
        # self.instance is the row as stored now (the form writes into it only after clean()).
        differs = [
            f"{field.verbose_name} (now {field.value_from_object(self.instance)!r})"
            for field in self.instance._meta.concrete_fields
            if field.name in self.fields and field.name in cleaned
            and field.value_from_object(self.instance) != cleaned[field.name]
        ]
        raise forms.ValidationError(
            "Someone else saved this %(what)s after you opened it (you opened version %(opened)s; "
            "it is now version %(now)s, saved %(when)s). Nothing was saved. %(differs)s"
            "Reload the page to edit the current version.",
            code="stale",
            params={
                "what": self.instance._meta.verbose_name,
                "opened": opened,
                "now": self.instance.version,
                "when": self.instance.updated_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
                "differs": f"Stored now, unlike your form: {'; '.join(differs)}. " if differs else "",
            },
        )


class ToolForm(VersionedForm):
    handler = handler_field("tool", "Handler", "handler kind: a function registered with @tool_handler.")

    class Meta:
        model = Tool
        fields = "__all__"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "kind" in self.fields:  # tool-form.js shows the chosen kind's fields (Tool.KIND_FIELDS)
            self.fields["kind"].widget.attrs["data-kind-fields"] = json.dumps(Tool.KIND_FIELDS)
            self.fields["kind"].help_text = (
                "Only this kind's fields are shown; saving clears the other kinds' fields.")


class ResourceForm(VersionedForm):
    handler = handler_field(
        "resource", "Handler", "handler kind: a function registered with @resource_handler."
    )

    class Meta:
        model = Resource
        fields = "__all__"


class ResourceTemplateForm(VersionedForm):
    handler = handler_field(
        "resource", "Handler", "handler kind: a function registered with @resource_handler."
    )
    completion_handler = handler_field("completion", "Completion handler")

    class Meta:
        model = ResourceTemplate
        fields = "__all__"


class PromptForm(VersionedForm):
    handler = handler_field("prompt", "Handler", "Optional: a @prompt_handler that builds the messages.")
    completion_handler = handler_field("completion", "Completion handler")

    class Meta:
        model = Prompt
        fields = "__all__"


class PromptMessageForm(forms.ModelForm):
    class Meta:
        model = PromptMessage
        fields = "__all__"
        widgets = {"content": JSONEditorWidget(attrs={"rows": 5})}


class TryArgumentsForm(forms.Form):
    arguments = forms.JSONField(
        widget=JSONEditorWidget(attrs={"rows": 8}),
        initial=dict,
        required=False,
        help_text="A JSON object of arguments.",
    )

    def clean_arguments(self) -> dict[str, Any]:
        value = self.cleaned_data.get("arguments")
        if value in (None, ""):
            return {}
        if not isinstance(value, dict):
            raise forms.ValidationError("The arguments must be a JSON object.")
        return value


class TryURIForm(forms.Form):
    uri = forms.CharField(label="URI", max_length=2048, help_text="A URI that matches the template.")
