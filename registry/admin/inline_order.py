"""Ordered inlines in the admin (a prompt's arguments and messages): rows are dragged into order
by their handle, and a new row goes after the others.

``inline-order.js`` numbers the rows as they stand on the page (0, 1, 2, …) after a drag, and gives
a row added with "Add another" the next position. Without the script, a position left empty is
the next one too (``OrderedFormSet``), so a new row never lands at 0 in front of the others.
"""

from __future__ import annotations

from django import forms
from django.forms.models import BaseInlineFormSet

from mcp_django.compat.django import should_delete_form


class PositionInput(forms.NumberInput):
    class Media:
        js = ("registry/inline-order.js",)
        css = {"all": ("registry/inline-order.css",)}

    def __init__(self) -> None:
        super().__init__(attrs={"class": "mcp-position", "min": 0, "style": "width: 4em"})


class OrderedForm(forms.ModelForm):
    """``position`` may be left empty: the formset puts the row after the others."""

    position = forms.IntegerField(
        required=False,
        min_value=0,
        widget=PositionInput(),
        help_text="Order; drag the ☰ handle to reorder. Empty: after the others.",
    )


class OrderedFormSet(BaseInlineFormSet):
    def clean(self) -> None:
        super().clean()
        kept = [
            form
            for form in self.forms
            if form.is_valid()
            and not should_delete_form(self, form)
            and (form.instance.pk is not None or form.has_changed())
        ]
        taken = [f.cleaned_data["position"] for f in kept if f.cleaned_data.get("position") is not None]
        following = max(taken, default=-1) + 1
        for form in kept:
            if form.cleaned_data.get("position") is None:
                form.instance.position = following
                following += 1
