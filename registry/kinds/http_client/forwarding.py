"""Caller context an http tool forwards to its upstream when its row says so.

- ``X-MCP-Principal`` (``Tool.http_forward_principal``): the id of who called (an API key's
  principal, an OAuth subject, ``anonymous``), never a credential: the bearer token the client
  sent stays here.
- ``traceparent`` / ``tracestate`` (``Tool.http_forward_trace``): W3C Trace Context, taken from the
  request's ``params._meta`` (SEP-414 puts the propagated fields at its root), so the upstream's
  spans join the client's trace. Forwarded only when well-formed (W3C Trace Context §3.2:
  ``version-traceid-parentid-flags``, lower-case hex, ids not all zero, version not ``ff``);
  anything else is dropped rather than passed on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

PRINCIPAL_HEADER = "X-MCP-Principal"
_TRACEPARENT_RE = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")
_TRACESTATE_MAX = 512
_FIELD_VALUE_RE = re.compile(r"^[\x20-\x7e]*$")


def valid_traceparent(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    found = _TRACEPARENT_RE.fullmatch(value)
    return found is not None and found[1] != "ff" and set(found[2]) != {"0"} and set(found[3]) != {"0"}


def trace_headers(meta: Mapping[str, Any]) -> dict[str, str]:
    parent = meta.get("traceparent")
    if not valid_traceparent(parent):
        return {}
    found = {"traceparent": str(parent)}
    state = meta.get("tracestate")
    if isinstance(state, str) and len(state) <= _TRACESTATE_MAX and _FIELD_VALUE_RE.fullmatch(state):
        found["tracestate"] = state
    return found


def principal_headers(principal: str | None) -> dict[str, str]:
    if not principal or not _FIELD_VALUE_RE.fullmatch(principal):
        return {}
    return {PRINCIPAL_HEADER: principal}
