"""``manage.py load_conformance``: the fixtures the official conformance suite expects (idempotent)."""

from __future__ import annotations

from .load_demo import Command as LoadDemo


class Command(LoadDemo):
    help = "Load the official MCP conformance suite's fixture set; loading again changes nothing."
    fixture = "conformance"
    skills = None  # the conformance skills are load_skills' own (its default folder)
