"""Which ``/mcp`` request a log line belongs to: the endpoint binds the request's ASGI scope to the
running task (``bind``), and a log formatter asks ``fields()`` for the request id, the session id
(truncated: a session id is a bearer of the session, so a log never carries it whole) and the
principal. Nothing is computed unless a line is logged; binding is one ``ContextVar.set``.

The request id is the client's or the balancer's ``X-Request-ID`` when it is a plain token (nginx
sets ``$request_id``: ``docker/nginx/mcp-proxy.conf``), else one made here on first use.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import MutableMapping
from contextvars import ContextVar
from typing import Any

from ..session import SHOWN_PREFIX

Scope = MutableMapping[str, Any]

PRINCIPAL = "mcp.principal"  # set by the endpoint once it knows who is calling
_REQUEST_ID = "mcp.request_id"
_TOKEN = re.compile(rb"[A-Za-z0-9._-]{1,64}")
_current: ContextVar[Scope | None] = ContextVar("mcp_request_scope", default=None)
SESSION_PREFIX = SHOWN_PREFIX  # characters of the session id a log line shows


def bind(scope: Scope) -> None:
    _current.set(scope)


def _request_id(scope: Scope) -> str:
    found = scope.get(_REQUEST_ID)
    if found is None:
        for name, value in scope.get("headers", ()):
            if name == b"x-request-id" and _TOKEN.fullmatch(value):
                found = value.decode("ascii")
                break
        else:
            found = secrets.token_hex(8)
        scope[_REQUEST_ID] = found
    return str(found)


def fields() -> dict[str, Any]:
    """The current request's log fields, or nothing outside a request."""
    scope = _current.get()
    if scope is None:
        return {}
    out: dict[str, Any] = {"request_id": _request_id(scope)}
    for name, value in scope.get("headers", ()):
        if name == b"mcp-session-id":
            out["session"] = value[:SESSION_PREFIX].decode("ascii", "replace") + "…"
            break
    principal = scope.get(PRINCIPAL)
    if principal is not None:
        out["principal"] = principal
    return out
