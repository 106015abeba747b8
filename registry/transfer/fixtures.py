"""Loads a registry document (``fixtures/*.json``) idempotently: ``transfer.import_document`` in
``merge`` mode, raising on the first problem instead of reporting them.

A document is ``{"tools": [...], "resources": [...], "resource_templates": [...], "prompts": [...],
"servers": [...]}`` (see ``documents.py``; the demo's two virtual servers, ``docs`` and ``ops``,
serve at ``/mcp/docs`` and ``/mcp/ops``). Loading twice changes nothing and the second load publishes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError

from .documents import SECTIONS, import_document

__all__ = ["FIXTURES", "SECTIONS", "load_document", "read_fixture"]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def read_fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def load_document(document: dict[str, Any]) -> dict[str, int]:
    """Create or update every definition of ``document``; returns how many rows changed per section."""
    outcome = import_document(document, mode="merge")
    if outcome.errors:
        raise ValidationError([f"{p.path}: {p.message}" for p in outcome.errors])
    return {section: len(r["created"]) + len(r["updated"]) for section, r in outcome.sections.items()}
