"""The shape of the settings reference's rows: a variable (``Var``), its default read from the
module that owns it (``Code``) or quoted as written where it is read (``Text``), and how a
default is written on the page (``render``, ``cell``). The families' modules build their sections
from these; ``generator.py`` lays them out."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Code:
    """A default read from code: ``module.attribute`` or ``module.attribute[key]``."""

    module: str
    attribute: str
    key: str | None = None
    # Words after the value, e.g. "(loopback hosts only)" for an empty list.
    note: str = ""

    def value(self) -> Any:
        found = getattr(importlib.import_module(self.module), self.attribute)
        return found[self.key] if self.key is not None else found


@dataclass(frozen=True)
class Text:
    """A default written as words (a computed default, or one written inline where it is read)."""

    text: str


@dataclass(frozen=True)
class Var:
    name: str
    default: Code | Text
    meaning: str


def render(value: Any) -> str:
    """A default as the environment variable would be written."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`1`" if value else "`0`"
    if isinstance(value, float) and value.is_integer():
        return f"`{int(value)}`"
    if isinstance(value, (list, tuple)):
        return f"`{','.join(str(v) for v in value)}`" if value else "empty"
    if isinstance(value, dict):
        return f"`{json.dumps(value)}`"
    if isinstance(value, str) and not value:
        return "empty"
    return f"`{value}`"


def cell(default: Code | Text) -> str:
    if isinstance(default, Text):
        return default.text
    return render(default.value()) + (f" {default.note}" if default.note else "")


MCP = "mcp_django.conf"
ACCESS = (MCP, "ACCESS_DEFAULTS")
OAUTH_SERVER = "oauth_server.conf"
HTTP_KIND = "registry.kinds.http_client.config"


def mcp(key: str) -> Code:
    return Code(MCP, "DEFAULTS", key)


def access(key: str) -> Code:
    return Code(*ACCESS, key)


def oauth_server(key: str) -> Code:
    return Code(OAUTH_SERVER, "DEFAULTS", key)


def http_kind(key: str) -> Code:
    return Code(HTTP_KIND, "DEFAULTS", key)


def debug_on_off(on: str) -> Text:
    return Text(f"`{on}` when `DJANGO_DEBUG=0`, else `0`")


# One section of the page: its title, an introduction (or ""), its rows.
Section = tuple[str, str, list[Var]]
