"""An http tool's call as the HTTP request it sends: method, URL, headers, body.

- The URL is the row's RFC 6570 template expanded with the arguments (the project's one
  expander, ``mcp_protocol.uri_template``): ``/pets/{id}{?limit,tags*}``. An expansion that leaves
  where the template points (a dot segment, another host: ``url_guard``) is a ``ToolError``.
  Values are turned into
  what RFC 6570 expands (§2.3): a string as is, a number or boolean as its JSON text, a list of
  those as a list, an object as an associative array; null or absent is undefined (left out).
- The body is JSON: the row's body template rendered with the arguments (``templating.render_json``),
  or, with none, the arguments the URL did not use, for POST, PUT and PATCH; GET and DELETE send
  no body then. A URL with no variables leaves every argument to the body: what the kind always
  did (POST the arguments).
- Headers: the kind's own (``Accept``, ``User-Agent``, ``X-MCP-Tool``, ``Content-Type`` with a
  body) and the row's static ones; the secret, the signature and forwarded context are added by
  ``kinds/http.py``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_protocol.errors import ToolError
from mcp_protocol.uri_template import Value, parse_template

from ...serving.specs import ToolSpec
from ...validation.templating import render_json
from .url_guard import escape
from .validation import METHODS_WITHOUT_BODY

ACCEPT = "application/json, application/problem+json;q=0.9, text/plain;q=0.8, */*;q=0.5"


@dataclass(slots=True)
class Outgoing:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def template_value(value: Any) -> Value | None:
    """An argument as an RFC 6570 value (§2.3: string, list or associative array)."""
    if value is None:
        return None
    if isinstance(value, list):
        return [_text(item) for item in value if item is not None]
    if isinstance(value, Mapping):
        return {str(k): _text(v) for k, v in value.items() if v is not None}
    return _text(value)


def expand_url(template: str, arguments: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """The URL for ``arguments`` and the names of the variables it used."""
    if "{" not in template:
        return template, ()
    parsed = parse_template(template)
    values = {name: v for name in parsed.variables if (v := template_value(arguments.get(name))) is not None}
    return parsed.expand(values), parsed.variables


def build(spec: ToolSpec, arguments: Mapping[str, Any]) -> Outgoing:
    url, used = expand_url(spec.http_url, arguments)
    if problem := escape(spec.http_url, url):
        raise ToolError(f"Tool {spec.name!r} cannot send this request: {problem}")
    headers = {"Accept": ACCEPT, "User-Agent": "mcpsite-http-tool", "X-MCP-Tool": spec.name}
    headers.update(spec.http_headers)
    payload: Any
    if spec.http_body_template is not None:
        payload = render_json(spec.http_body_template, arguments)
    elif spec.http_method in METHODS_WITHOUT_BODY:
        payload = None
    else:
        payload = {k: v for k, v in arguments.items() if k not in used} if used else dict(arguments)
    body = None
    if payload is not None:
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        headers["Content-Type"] = "application/json"
    return Outgoing(spec.http_method, url, headers, body)
