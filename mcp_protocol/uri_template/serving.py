"""Which of several templates serves a URI: most literal characters, then fewest variables, then
the smallest template text. The order depends on the templates only, never on names or listing
order (see the package docstring)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from .parts import TemplateSyntaxError
from .template import parse_template


def precedence(template: str) -> tuple[int, int, str]:
    """The sort key of ``serving_template``: most literal characters, fewest variables, text."""
    parsed = parse_template(template)
    return (-parsed.literal_length, len(parsed.variables), template)


@lru_cache(maxsize=256)
def _ordered(templates: tuple[str, ...]) -> tuple[str, ...]:
    valid = []
    for template in templates:
        try:
            parse_template(template)
        except TemplateSyntaxError:
            continue  # matches nothing
        valid.append(template)
    return tuple(sorted(valid, key=precedence))


def serving_template(templates: Iterable[str], uri: str) -> tuple[str, dict[str, str]] | None:
    """The template of ``templates`` that serves ``uri`` and the variables it reads, or None when
    none matches."""
    for template in _ordered(tuple(templates)):
        variables = parse_template(template).match(uri)
        if variables is not None:
            return template, variables
    return None
