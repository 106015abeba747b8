"""The settings reference, ``docs/reference/settings.md``: ``generator.py`` lays the page out from
the sections each family's module writes (``rows.py`` holds their shape). Gathers the names the
test and the command use."""

from .generator import PAGE, SECTIONS, generate, main, variables
from .rows import Code, Section, Text, Var

__all__ = ["PAGE", "SECTIONS", "Code", "Section", "Text", "Var", "generate", "main", "variables"]
