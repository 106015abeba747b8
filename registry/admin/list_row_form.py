"""The form of one row of an admin list whose fields are editable in place (``list_editable``:
``enabled``). The row's form holds those few fields, but saving runs the model's whole validation
(``full_clean``), which may refuse a field the row does not show: enabling an http tool whose host
is not allowed is an error on ``http_url``. Django's ``add_error`` raises ``ValueError`` for a
field the form lacks (a 500, issue 37); here such errors become the row's own errors, named by
field, shown above the row, and nothing is saved.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError


class ListRowForm(forms.ModelForm):  # type: ignore[type-arg]
    def add_error(self, field: str | None, error: Any) -> None:
        if field is None and isinstance(error, ValidationError) and hasattr(error, "error_dict"):
            kept: dict[str, list[Any]] = {}
            for name, errors in error.error_dict.items():
                if name == NON_FIELD_ERRORS or name in self.fields:
                    kept.setdefault(name, []).extend(errors)
                else:
                    kept.setdefault(NON_FIELD_ERRORS, []).extend(
                        f"{name}: {message}" for e in errors for message in e.messages
                    )
            error = ValidationError(kept)
        super().add_error(field, error)
