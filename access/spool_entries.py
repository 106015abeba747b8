"""The audit spool's entries as the drain reads them (``spool.py`` writes them): each entry's
fields, a batch's ``h`` arrays parsed at once, an entry decoded strictly into an ``AuditEntry``,
and SQLite's rows built straight from a batch. Pure functions: ``drain.py`` reads, writes and
acknowledges.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from mcp_protocol.auth.audit import AuditEntry

Message = tuple[str, Any]  # (stream id, fields: the raw [name, value, ...] list, or a dict)


def fields_of(fields: Any) -> tuple[Any, Any]:
    """An entry's ``h`` and ``a``. The spool writes exactly ``h``, ``a``, which the raw reply gives
    as a list of four; anything else is looked up by name (``KeyError``: not an entry of ours)."""
    if type(fields) is list and len(fields) == 4 and fields[0] == "h" and fields[2] == "a":
        return fields[1], fields[3]
    named = fields if isinstance(fields, dict) else dict(zip(fields[::2], fields[1::2], strict=True))
    return named["h"], named.get("a")


def heads_of(texts: list[Any]) -> list[Any]:
    """The ``h`` arrays of a batch, parsed in one ``json.loads`` of their texts joined into one
    array: a loop in C, where a call per entry cost 2.9 µs of the drain's 19 (the decoder's
    Python wrapper). Any entry that is not one JSON value makes it fail (``ValueError``,
    ``TypeError``) or miscount (``ValueError``): the caller then parses each alone."""
    heads = json.loads("[" + ",".join(texts) + "]", parse_constant=_not_finite)
    if len(heads) != len(texts):
        raise ValueError("an h holds more than one JSON value")
    return heads  # type: ignore[no-any-return]


def _not_finite(literal: str) -> float:
    """``NaN``, ``Infinity``: JSON's extensions no spool entry holds (``repr`` writes ``nan``)."""
    raise ValueError(f"{literal} in an audit entry")


def decode(fields: Any, vendor: str) -> tuple[str, AuditEntry]:
    """A stream entry → (spool id, entry), strictly: each value of the type ``HEAD`` gives it,
    or ``ValueError``/``TypeError``/``KeyError``. The arguments' JSON text is kept as is (SQLite
    stores it); only other backends, which bind the value, parse it."""
    head, text = fields_of(fields)
    return entry_of(json.loads(head), text or None, vendor)


def entry_of(head: Any, text: str | None, vendor: str) -> tuple[str, AuditEntry]:
    if type(head) is not list:
        raise TypeError("h is not an array")
    (spool_id, when, principal, principal_id, session, revision, method, name, outcome, error,
     duration_ms, *rest) = head
    server = _server(rest)
    texts = (spool_id, principal, revision, method, name, outcome, error, server)
    if not all(type(v) is str for v in texts) \
            or not all(v is None or type(v) is str for v in (principal_id, session, text)):
        raise TypeError("a text field holds another type")
    when, duration_ms = float(when), float(duration_ms)
    # A time the datetime cannot hold, a duration SQLite would store as NULL: never writable.
    if not (0.0 <= when < 253_402_000_000.0 and math.isfinite(duration_ms)):
        raise ValueError("time or duration out of range")
    arguments = json.loads(text) if text is not None and vendor != "sqlite" else None
    return spool_id, AuditEntry(when, principal, principal_id, session, revision, method, name,
                                arguments, outcome, error, duration_ms, text, server)


def _server(rest: list[Any]) -> Any:
    """``HEAD``'s ``server`` (issue 39): absent from entries spooled before it was written ("")."""
    if len(rest) > 1:
        raise ValueError("h has more fields than HEAD")
    return rest[0] if rest else ""


def sqlite_rows(messages: list[Message], when: Callable[[float], str]) -> list[tuple[object, ...]] | None:
    """SQLite's rows (``audit.SPOOLED``'s values) straight from the entries: no ``AuditEntry``,
    the time's text from ``when`` (``audit.sqlite_time``: a per-second cache), the arguments' JSON
    text as the spool holds it. ``None`` when an entry is not as the spool writes it: the caller
    then decodes each strictly (``decode``)."""
    try:
        pairs = [fields_of(m[1]) for m in messages]
        heads = heads_of([p[0] for p in pairs])
        rows: list[tuple[object, ...]] = []
        append = rows.append
        for head, (_, text) in zip(heads, pairs, strict=True):
            (spool_id, t, principal, principal_id, session, revision, method, name, outcome, error,
             duration_ms, *rest) = head
            append((when(t), principal[:300], (principal_id or "")[:300], session or "", revision,
                    method, name[:500], text or None, outcome, error, round(duration_ms, 3),
                    _server(rest)[:64], spool_id))
    except Exception:  # any entry not as ours are: the strict path names it
        return None
    return rows
