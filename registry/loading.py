"""Loads a registry document (``fixtures/*.json``) idempotently.

A document is ``{"tools": [...], "resources": [...], "resource_templates": [...], "prompts": [...]}``
where each item holds model field values; prompts carry ``arguments`` and ``messages`` lists (their
order is their position). Rows are matched by their natural key (tool/prompt/template name,
resource URI), validated with ``full_clean()`` and saved only when something differs, all in one
transaction: loading twice changes nothing and the second load publishes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.db import models, transaction

from .models import Prompt, PromptArgument, PromptMessage, Resource, ResourceTemplate, Tool

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SECTIONS: tuple[tuple[str, type[models.Model], str], ...] = (
    ("tools", Tool, "name"),
    ("resources", Resource, "uri"),
    ("resource_templates", ResourceTemplate, "uri_template"),
    ("prompts", Prompt, "name"),
)


def read_fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def _upsert(model: type[models.Model], key: str, data: dict[str, Any]) -> tuple[models.Model, bool]:
    instance = model._default_manager.filter(**{key: data[key]}).first() or model()
    changed = instance.pk is None
    for field, value in data.items():
        if getattr(instance, field) != value:
            setattr(instance, field, value)
            changed = True
    if changed:
        instance.full_clean()
        instance.save()
    return instance, changed


def _children(prompt: Prompt, model: type[models.Model], items: list[dict[str, Any]]) -> bool:
    wanted = [{"position": index, **item} for index, item in enumerate(items)]
    fields = sorted({f for item in wanted for f in item} | {"position"})
    current = list(model._default_manager.filter(prompt=prompt).order_by("position", "id").values(*fields))
    normal = [{f: item.get(f, model._meta.get_field(f).get_default()) for f in fields} for item in wanted]
    if current == normal:
        return False
    model._default_manager.filter(prompt=prompt).delete()
    for item in wanted:
        child = model(prompt=prompt, **item)
        child.full_clean()
        child.save()
    return True


@transaction.atomic
def load_document(document: dict[str, Any]) -> dict[str, int]:
    """Create or update every definition of ``document``; returns how many rows changed per section."""
    counts: dict[str, int] = {}
    for section, model, key in SECTIONS:
        changed = 0
        for raw in document.get(section, []):
            data = dict(raw)
            arguments, messages = data.pop("arguments", []), data.pop("messages", [])
            instance, did_change = _upsert(model, key, data)
            if isinstance(instance, Prompt):
                did_change = _children(instance, PromptArgument, arguments) or did_change
                did_change = _children(instance, PromptMessage, messages) or did_change
            changed += did_change
        counts[section] = changed
    return counts
