"""The audit log of tool calls, resource reads and prompt gets, written off the hot path.

``AuditQueue.record`` (an ``AuditEntry``) or ``add`` (the guard's: a plain ``Row``) appends to a
bounded in-process queue and returns at once; a background task hands the queue to the
``AuditSink`` (the ``access`` app: one bulk insert) in batches every ``FLUSH_EVERY`` seconds or as
soon as ``BATCH`` entries wait. When the queue is full the entry is dropped, counted and reported
in the log (at most every ``REPORT_EVERY`` seconds):
the call is never slowed down by a slow database. Drops are counted by reason (``queue_full``,
``write_failed``, ``sink_full``: a bounded sink refused them) in ``dropped_by`` and passed to
``on_drop`` (the metrics counter, given by whoever builds the queue) when set.

Arguments are stored redacted and capped: any value under a key that looks like a secret
(``password``, ``token``, ``secret``, ``api_key``, ``authorization``, ...) at any depth becomes
``"[redacted]"``, and arguments whose JSON exceeds ``max_bytes`` are cut (``{"_truncated": ...}``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import tracing
from ..options import refuse_leftover

logger = logging.getLogger("mcp_protocol.audit")

FLUSH_EVERY = 0.5
BATCH = 500
REPORT_EVERY = 10.0
REDACTED = "[redacted]"
SECRET_KEY = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api[-_]?key|apikey|auth(orization)?|credential|"
    r"private[-_]?key|cookie|session[-_]?id|signature",
    re.IGNORECASE,
)


# Not frozen: a frozen dataclass's __init__ sets each field through object.__setattr__, 1.14 against
# 0.2 µs an entry, paid on the serving thread for every audited call. Nothing changes an entry
# once recorded (``_prepare`` builds new ones).
@dataclass(slots=True)
class AuditEntry:
    time: float  # epoch seconds, when the call started
    principal: str  # the principal's label (a key prefix, issuer + subject, "anonymous")
    principal_id: str | None
    session: str | None
    revision: str
    method: str  # tools/call, resources/read, prompts/get
    name: str  # tool or prompt name, resource URI
    arguments: Any
    outcome: str  # ok, tool_error, error, rate_limited
    error: str  # the JSON-RPC error code and message, or the tool error's text, short
    duration_ms: float
    # ``arguments`` as JSON text, set with the redacted and capped value before a sink sees the
    # entry: capping measured that text already, so a sink stores it instead of encoding again.
    arguments_json: str | None = None
    # The endpoint called (issue 39): a virtual server's slug, "" for the catch-all /mcp
    # (``endpoints.CATCH_ALL``).
    server: str = ""


_secret_keys: dict[str, bool] = {}  # key → looks like a secret (keys repeat: a tool's argument names)


def _is_secret(key: str) -> bool:
    found = _secret_keys.get(key)
    if found is None:
        found = SECRET_KEY.search(key) is not None
        if len(_secret_keys) < 10_000:
            _secret_keys[key] = found
    return found


# Values that redaction keeps as they are: kept without a recursive call for each (most values
# of a tool's arguments are these).
_LEAVES = frozenset({str, int, float, bool, type(None)})


def redact(value: Any, depth: int = 0) -> Any:
    if depth > 20:
        return "[too deep]"
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(k, str) and _is_secret(k):
                out[k] = REDACTED
            elif v.__class__ in _LEAVES:
                out[k] = v
            else:
                out[k] = redact(v, depth + 1)
        return out
    if isinstance(value, list):
        return [v if v.__class__ in _LEAVES else redact(v, depth + 1) for v in value]
    return value


# One encoder: json.dumps with any option builds a JSONEncoder per call (1.55 against 0.92 µs for
# a small argument object, per audited call in the writer thread).
_encode = json.JSONEncoder(ensure_ascii=False, default=str).encode
# And JSONEncoder.encode itself builds the C encoder (c_make_encoder) per call: 1.26 µs for
# {"message": "hello"}, against 0.42 µs through one built once, with the same separators and
# output. It is built without a circular-reference check (markers None): it only sees what
# ``redact`` returned, which is copied, at most 21 dicts/lists deep, so never circular itself;
# anything it still cannot encode (a circular tuple) goes through ``_encode`` and fails as before.
_make_c_encoder = getattr(json.encoder, "c_make_encoder", None)  # None: no _json C accelerator
_c_encode = (
    _make_c_encoder(None, str, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)
    if _make_c_encoder is not None
    else None
)


def _json(value: Any) -> str:
    if _c_encode is None:
        return _encode(value)
    try:
        return "".join(_c_encode(value, 0))
    except RecursionError:
        return _encode(value)


def capped(value: Any, max_bytes: int) -> Any:
    return _capped(value, max_bytes)[0]


def prepare_arguments(value: Any, max_bytes: int) -> str | None:
    """``AuditEntry.arguments_json`` of ``value`` as ``_prepare`` sets it."""
    return _capped(value, max_bytes)[1]


def _capped(value: Any, max_bytes: int) -> tuple[Any, str | None]:
    """The redacted, capped value and its JSON text (``None`` for ``None``: stored as SQL NULL)."""
    if value is None:
        return None, None
    value = redact(value)
    text = _json(value)
    # A character is at most 4 bytes of UTF-8: short texts need no encoding to be measured.
    if len(text) * 4 <= max_bytes or len(text.encode()) <= max_bytes:
        return value, text
    cut = {"_truncated": text.encode()[:max_bytes].decode(errors="ignore")}
    return cut, _json(cut)


# What the queue holds per entry: AuditEntry's fields up to ``duration_ms``, in order, then its
# ``server``, as a plain tuple. The guard builds one per audited call on the serving thread (a
# tuple is ~0.1 µs, an AuditEntry by keyword ~0.6), and ``_prepare`` builds the one AuditEntry a
# sink sees.
Row = tuple[float, str, str | None, str | None, str, str, str, Any, str, str, float, str]


def row_of(e: AuditEntry) -> Row:
    return (
        e.time,
        e.principal,
        e.principal_id,
        e.session,
        e.revision,
        e.method,
        e.name,
        e.arguments,
        e.outcome,
        e.error,
        e.duration_ms,
        e.server,
    )


def _prepare(batch: list[Row], max_bytes: int) -> list[AuditEntry]:
    prepared = []
    for (
        when,
        principal,
        principal_id,
        session,
        revision,
        method,
        name,
        arguments,
        outcome,
        error,
        duration_ms,
        server,
    ) in batch:
        arguments, text = _capped(arguments, max_bytes)
        prepared.append(
            AuditEntry(
                when,
                principal,
                principal_id,
                session,
                revision,
                method,
                name,
                arguments,
                outcome,
                error,
                duration_ms,
                text,
                server,
            )
        )
    return prepared


class AuditSink(ABC):
    """Where prepared entries go. The queue calls ``encode_rows`` (by default ``encode`` of the
    prepared entries) in its worker thread (the CPU a sink can spend off the event loop) and
    ``write`` with what it returned. ``write`` returns how many entries the sink refused for lack
    of room (counted as dropped); an exception in either drops the batch (counted, logged)."""

    strict_options = True  # an option no class of the backend takes is refused (options.py)

    def __init__(self, **options: Any) -> None:
        refuse_leftover(self, options)

    def encode(self, entries: list[AuditEntry]) -> Any:
        return entries

    def encode_rows(self, rows: list[Row], max_bytes: int) -> Any:
        """What the queue calls: ``encode`` of the rows as prepared entries (redacted, arguments
        capped to ``max_bytes``). A sink that needs no ``AuditEntry`` may encode the rows
        itself, with ``prepare_arguments`` for their arguments."""
        return self.encode(_prepare(rows, max_bytes))

    @abstractmethod
    async def write(self, batch: Any) -> int | None: ...

    async def status(self) -> dict[str, float]:
        """Gauges for /metrics (name → value, ``mcp_audit_`` is prepended); none by default."""
        return {}

    async def close(self) -> None:  # noqa: B027 (optional hook)
        pass


class AuditQueue:
    def __init__(self, sink: AuditSink, *, size: int = 10000, max_bytes: int = 4096,
                 on_drop: Callable[[str, int], None] | None = None) -> None:
        self.sink, self.size, self.max_bytes = sink, size, max_bytes
        self._queue: deque[Row] = deque()
        # Beside each queued row, its request's span when tracing records it (else None), so
        # the batch's "audit write" span links back to the requests it wrote.
        self._sources: deque[object] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.dropped = 0
        self.dropped_by: dict[str, int] = {}
        self.on_drop = on_drop
        self._reported_at = 0.0

    def _drop(self, reason: str, count: int) -> None:
        self.dropped += count
        self.dropped_by[reason] = self.dropped_by.get(reason, 0) + count
        if self.on_drop is not None:
            self.on_drop(reason, count)

    def record(self, entry: AuditEntry) -> None:
        self.add(row_of(entry))

    def add(self, row: Row) -> None:
        """``record`` of an entry given as a ``Row`` (the guard's: no AuditEntry per call)."""
        queue = self._queue
        if len(queue) >= self.size:
            self._drop("queue_full", 1)
            now = time.monotonic()
            if now - self._reported_at >= REPORT_EVERY:
                logger.warning("audit queue full (%d): %d entries dropped so far", self.size, self.dropped)
                self._reported_at = now
            return
        queue.append(row)
        self._sources.append(tracing.recording())
        if len(queue) >= BATCH:
            self._wake.set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        await self.flush()
        with contextlib.suppress(Exception):
            await self.sink.close()

    async def flush(self, *, minimum: int = 1, limit: int | None = None) -> None:
        """Write batches while at least ``minimum`` entries wait, ``limit`` entries at most in all
        (``None``: until the queue is empty, as ``close`` does). Each write is one transaction,
        whose commit costs the writer thread about 1 ms of CPU whatever its size (SQLite's
        journal and fsync, measured per write in the served bench): draining the queue as fast as
        it filled wrote ~80-row batches back to back, ~12 µs of CPU per audited call in commits
        alone, as a loop "until empty" does under steady load."""
        left = float("inf") if limit is None else limit
        while self._queue and left > 0 and len(self._queue) >= minimum:
            size = int(min(BATCH * 5, len(self._queue), left))
            batch = [self._queue.popleft() for _ in range(size)]
            sources = [s for s in (self._sources.popleft() for _ in range(size)) if s is not None]
            left -= size
            # Redacted, capped and encoded in a thread: not by the call that recorded it, nor on
            # the loop.
            try:
                with tracing.batch("audit write", sources, {"mcp.audit.entries": size}):
                    encoded = await asyncio.to_thread(self._encode, batch)
                    refused = await self.sink.write(encoded)
            except Exception:
                self._drop("write_failed", size)
                logger.exception("could not write %d audit entries (dropped)", size)
            else:
                if refused:
                    self._drop("sink_full", refused)

    def _encode(self, batch: list[Row]) -> Any:
        return self.sink.encode_rows(batch, self.max_bytes)

    async def _run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), FLUSH_EVERY)
                woken = True
            except TimeoutError:
                woken = False
            self._wake.clear()
            if woken:
                await self.flush(minimum=BATCH)  # whole batches; the rest waits for the next
            else:
                # A tick: what waits now, so no entry waits much longer than FLUSH_EVERY; what
                # arrives while it is written waits for the next wake or tick.
                await self.flush(limit=len(self._queue))
