"""What every registry definition shares: ``Definition`` (the spec's metadata fields, tags, the
enabled switch, the ``version`` of optimistic concurrency, a history) and the helpers of the
kinds' models (a handler name checked against the allow-list, a MIME type field).

Rows hold what a client sees (the spec's metadata fields) and what the server does, chosen among
kinds that code allows: a *name* from the handler allow-list (``handlers.py``), an HTTP endpoint
on the host allow-list, or a safe text template (``validation/templating.py``) — never an import
path. Validation lives in ``validation/validators.py`` and in each model's ``clean()``, so the
admin, the API and ``full_clean()`` share it. Listing order is each model's ``Meta.ordering``
(unique keys), so it is deterministic. Saves and deletes are published by ``signals.py``, with
what each model says a change of it touches (``mcp_kind``, ``change_uris()``); queryset bulk
writes, which send no per-row signals, are published by ``ChangeQuerySet``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.core.exceptions import ValidationError
from django.db import models

from .. import handlers
from ..changes.publish import ChangeQuerySet
from ..changes.reach import State, Touches
from ..validation.validators import validate_icons, validate_media_type, validate_meta, validate_tags
from .concurrency import Versioned
from .history import Recorded
from .remembered import Remembered


def mime_type_field() -> models.CharField:
    return models.CharField(
        "MIME type",
        max_length=255,
        blank=True,
        validators=[validate_media_type],
        help_text="e.g. text/plain, application/json (RFC 6838 type/subtype).",
    )


class Definition(Remembered, Versioned, Recorded):
    """Fields every listed definition has (schema.ts ``BaseMetadata``, ``Icons``, ``_meta``), and
    the ``version`` of optimistic concurrency (``concurrency.py``)."""

    mcp_kind: ClassVar[str]
    # The natural key and the table of registry.code that must not define it too.
    code_key: ClassVar[tuple[str, str]]
    # How a virtual server's selection names it (``mcp_protocol.endpoints.Selection``): its kind
    # there and the field holding its name (``remembered``: the field and the tags).
    selection_kind: ClassVar[str]

    title = models.CharField(max_length=255, blank=True, help_text="Human-readable name shown by clients.")
    description = models.TextField(blank=True)
    icons = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_icons],
        help_text='e.g. [{"src": "https://…/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}]',
    )
    meta = models.JSONField("_meta", default=dict, blank=True, validators=[validate_meta])
    tags = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_tags],
        help_text="Not sent to clients. API keys (and OAuth scopes) granting one of these tags may use "
        'this definition, e.g. ["public"].',
    )
    enabled = models.BooleanField(default=True, help_text="Disabled definitions are not served.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ChangeQuerySet.as_manager()

    class Meta:
        abstract = True

    def selected_as(self, stored: bool = False) -> State | None:
        """The definition as a selection sees it: now, or (``stored``) as the database held it."""
        name_field = self.remembered[0]
        values = self.stored() if stored else {name_field: getattr(self, name_field), "tags": self.tags}
        if values is None:
            return None
        return State(self.selection_kind, values[name_field], frozenset(values["tags"] or ()))

    def renamed(self) -> tuple[str, str, str] | None:
        """(selection kind, old name, new name) when a save changed how selections name it."""
        old, new = self.selected_as(True), self.selected_as()
        return None if old is None or new is None or old.name == new.name else (new.kind, old.name, new.name)

    def touches(self) -> Touches:
        """The endpoints whose selection allows this definition before the save or after."""
        return Touches(states=frozenset(s for s in (self.selected_as(True), self.selected_as()) if s))

    def validate_unique(self, exclude: Any = None) -> None:
        """Unique among rows (Django's check) and not taken by a definition in code, which would
        hide this row from clients (admin and API forms call this too)."""
        errors: dict[str, Any] = {}
        try:
            super().validate_unique(exclude)
        except ValidationError as exc:
            errors = exc.update_error_dict(errors)
        field, table = self.code_key
        if not exclude or field not in exclude:
            from ..code.definitions import code_owner

            owner = code_owner(table, getattr(self, field))
            if owner:
                errors.setdefault(field, []).append(
                    ValidationError(
                        f"{getattr(self, field)!r} is defined in code by {owner}: choose another.",
                        code="defined_in_code",
                    )
                )
        if errors:
            raise ValidationError(errors)


def check_handler(errors: dict[str, str], field: str, family: str, value: str, required: bool) -> None:
    if not value:
        if required:
            errors[field] = (
                f"Choose a registered {family} handler "
                f"(registered: {', '.join(handlers.names(family)) or 'none'})."
            )
        return
    if value not in handlers.names(family):
        errors[field] = (
            f"No {family} handler named {value!r} is registered in code "
            f"(registered: {', '.join(handlers.names(family)) or 'none'})."
        )
