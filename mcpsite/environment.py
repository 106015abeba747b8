"""Reading settings from environment variables, and what a bad value does: ``BadEnvironment``,
raised while ``mcpsite.settings`` is imported, names the variable and what it should be, and the
entry points (``manage.py``, ``mcpsite.asgi`` for uvicorn and daphne) print it as one line and
exit with ``EXIT_CODE``, where a ``ValueError`` traceback from deep in Django's settings loading
used to say ``could not convert string to float: 'abc'`` and nothing of where it came from.

Only the reading is here; the defaults live with their settings (``mcp_django/conf.py`` for the
``MCP`` setting, ``mcpsite/settings.py`` for the rest).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, TypeVar

from django.core.exceptions import ImproperlyConfigured

T = TypeVar("T")
EXIT_CODE = 2  # a usage error, as argparse's

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
# What each parser expects, in the words of the message.
_EXPECTED: dict[Any, str] = {int: "a whole number", float: "a number", json.loads: "JSON"}


class BadEnvironment(ImproperlyConfigured):
    """An environment variable the settings cannot use; its message is the one line shown."""


def as_bool(value: str) -> bool:
    word = value.strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise ValueError("1/true/yes/on or 0/false/no/off")


def as_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def parse(name: str, value: str, parser: Callable[[str], T]) -> T:
    """``parser(value)``, or ``BadEnvironment`` naming ``name`` and what it should be."""
    try:
        return parser(value)
    except (ValueError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
        expected = _EXPECTED.get(parser) or str(exc) or "a valid value"
        raise BadEnvironment(f"{name}={value!r} is not valid: expected {expected}") from None


def env(name: str, parser: Callable[[str], T], default: T) -> T:
    """The variable parsed, or ``default`` when it is unset or empty."""
    value = os.environ.get(name, "")
    return parse(name, value, parser) if value.strip() else default


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else parse(name, value, as_bool)


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    return default if value is None else as_list(value)


_UNSET = object()  # an empty variable that means "the default", as an absent one does


def env_settings(spec: dict[str, tuple[str, Callable[[str], Any]]]) -> dict[str, Any]:
    """``{key: parse(value)}`` for each ``key: (variable, parse)`` whose variable is set: the MCP
    setting's defaults live in ``mcp_django/conf.py`` (``DEFAULTS``), not restated here."""
    found = {
        key: parse(name, os.environ[name], parser)
        for key, (name, parser) in spec.items()
        if name in os.environ
    }
    return {key: value for key, value in found.items() if value is not _UNSET}


def or_unset(parser: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse_or_unset(value: str) -> Any:
        return parser(value) if value.strip() else _UNSET

    _EXPECTED[parse_or_unset] = _EXPECTED.get(parser, "")  # the message says what ``parser`` takes
    return parse_or_unset


def exit_with(error: BadEnvironment) -> NoReturn:
    print(f"mcpsite: {error}", file=sys.stderr)
    sys.exit(EXIT_CODE)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Around an entry point: a bad environment variable is one line on stderr and exit 2."""
    try:
        yield
    except BadEnvironment as error:
        exit_with(error)
