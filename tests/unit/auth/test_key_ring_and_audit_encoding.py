"""The serving side's shortcuts keep their promises (issue 16, session 12): the key ring's
per-reload token cache forgets a removed key at the reload and still checks expiry per request;
the audit queue's C encoder writes what ``JSONEncoder`` wrote; the spool's cached ``HEAD`` parts
write what ``_head`` writes."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from access.spool import RedisSpoolSink, _head
from mcp_protocol.auth.audit import AuditEntry, _capped, _encode, _json, _prepare, row_of
from mcp_protocol.auth.keys import KeyRecord, KeyRing, KeySource, digest, new_token
from mcp_protocol.auth.principal import ALL
from mcp_protocol.bus.memory import MemoryBus


class ListSource(KeySource):
    def __init__(self, records: list[KeyRecord]) -> None:
        self.records = records

    async def load(self) -> list[KeyRecord]:
        return list(self.records)

    async def touch(self, last_used: dict[int, float]) -> None:
        pass


async def test_a_key_seen_before_a_reload_that_removed_it_is_refused() -> None:
    token, prefix = new_token()
    source = ListSource([KeyRecord(1, prefix, digest(token), ALL)])
    ring = KeyRing(source, MemoryBus())
    await ring.reload()
    first = ring.resolve(token)
    assert first is not None and first.id == "key:1"
    assert ring.resolve(token) is first  # the cached entry
    source.records = []  # revoked
    await ring.reload()
    assert ring.resolve(token) is None
    assert ring.resolve(token + "x") is None and ring.resolve("mcp_x_y") is None


async def test_a_cached_key_expires_by_the_clock_without_a_reload() -> None:
    now = [1000.0]
    token, prefix = new_token()
    ring = KeyRing(ListSource([KeyRecord(2, prefix, digest(token), ALL, expires_at=1010.0)]), MemoryBus(),
                   clock=lambda: now[0])
    await ring.reload()
    assert ring.resolve(token) is not None and ring.resolve(token) is not None
    now[0] = 1010.0
    assert ring.resolve(token) is None


async def test_unknown_tokens_are_not_remembered() -> None:
    ring = KeyRing(ListSource([]), MemoryBus())
    await ring.reload()
    for n in range(100):
        assert ring.resolve(f"mcp_{n:08x}_secret") is None
    assert not ring._tokens


class Odd:
    def __str__(self) -> str:
        return "odd"


@pytest.mark.parametrize("value", [
    {"message": "hello"}, {"é": "ünïcode ✓", "n": [1, 2.5, None, True, False, -0.0]},
    {"deep": {"a": [{"b": {"c": []}}]}, "x": Odd(), 3: "int key", "nan": math.nan, "inf": math.inf},
    "just a string", [1, "two"], 42, {"q": "\u2028\"\\\n"},
])
def test_the_c_encoder_writes_what_the_json_encoder_wrote(value: Any) -> None:
    assert _json(value) == _encode(value)


def test_a_circular_value_still_fails_as_it_did() -> None:
    inner: list[Any] = []
    value = {"t": (inner,)}
    inner.append(value["t"])  # a tuple (not copied by redaction) that holds itself
    with pytest.raises((ValueError, RecursionError)):
        _capped(value, 4096)


def test_prepare_redacts_caps_and_keeps_every_field() -> None:
    entry = AuditEntry(1.5, "key ab", "key:1", "s", "2025-11-25", "tools/call", "echo",
                       {"message": "hi", "api_key": "k", "list": [{"token": "t"}]}, "ok", "", 0.25)
    (prepared,) = _prepare([row_of(entry)], 4096)
    assert prepared.arguments == {"message": "hi", "api_key": "[redacted]", "list": [{"token": "[redacted]"}]}
    assert json.loads(prepared.arguments_json or "") == prepared.arguments
    assert (prepared.time, prepared.principal, prepared.principal_id, prepared.session, prepared.revision,
            prepared.method, prepared.name, prepared.outcome, prepared.error, prepared.duration_ms) == (
        1.5, "key ab", "key:1", "s", "2025-11-25", "tools/call", "echo", "ok", "", 0.25)
    (cut,) = _prepare([row_of(AuditEntry(0, "p", None, None, "v", "tools/call", "t", {"x": "y" * 500},
                                         "ok", "", 0.1))], 64)
    assert set(cut.arguments) == {"_truncated"} and cut.arguments_json == _encode(cut.arguments)


async def test_the_spool_encodes_each_entry_as_head_does() -> None:
    sink = RedisSpoolSink(prefix="unit")
    entries = [
        AuditEntry(1_790_000_000.123456, "key ab", "key:1", "s1", "2025-11-25", "tools/call", "echo",
                   {"m": 1}, "ok", "", 0.1234, '{"m": 1}'),
        AuditEntry(1_790_000_001.0, "key ab", "key:1", "s1", "2025-11-25", "tools/call", "echo",
                   None, "tool_error", "boom \"quoted\" ✓", 3.0, None),
        AuditEntry(2.0, "anonymous", None, None, "2026-07-28", "resources/read", "demo://x", None,
                   "ok", "", 0.5, None),
        AuditEntry(3.0, "key ab", "key:1", "s1", "2025-11-25", "tools/call", "echo", {}, "error",
                   "-32602 bad", 1e-05, "{}"),
        AuditEntry(4.0, "key ab", "key:1", "s1", "2025-11-25", "tools/call", "echo", {}, "ok", "", 7.0, "{}"),
        AuditEntry(5.0, "key ab", "key:1", "s2", "2026-07-28", "tools/call", "echo", {}, "ok", "", 1.0, "{}",
                   server="support"),  # a virtual server's call (issue 39)
    ]
    try:
        for _ in range(2):  # the second time from the cache
            out = sink.encode(entries)
            heads, arguments = out[0::2], out[1::2]
            for head, entry, args in zip(heads, entries, arguments, strict=True):
                spool_id = json.loads(head)[0]
                assert head == _head(spool_id, entry)
                assert args == (entry.arguments_json or "")
        # A field of another type (not what the guard records) takes the general path.
        odd = AuditEntry(5, "p", None, None, "v", "tools/call", 7, None, "ok", "", 1)  # type: ignore[arg-type]
        head = sink.encode([odd])[0]
        assert json.loads(head)[1:] == [5, "p", None, None, "v", "tools/call", 7, "ok", "", 1, ""]
        # The queue's path: the same fields from the rows, as RESP bulk strings.
        packed = sink.encode_rows([row_of(e) for e in entries], 4096)
        assert packed.entries == len(entries)
        bulks, rest = [], packed.argv
        while rest:
            size, _, rest = rest[1:].partition(b"\r\n")
            bulks.append(rest[:int(size)].decode())
            assert rest[int(size):int(size) + 2] == b"\r\n"
            rest = rest[int(size) + 2:]
        heads, arguments = bulks[0::2], bulks[1::2]
        for head, entry, args in zip(heads, entries, arguments, strict=True):
            assert head == _head(json.loads(head)[0], entry)
            assert args == (_capped(entry.arguments, 4096)[1] or "")
    finally:
        await sink.close()


def test_a_spooled_entry_from_before_the_server_field_still_drains() -> None:
    from access.spool_entries import entry_of

    old = ["t-1", 1.0, "key ab", "key:1", "s1", "2025-11-25", "tools/call", "echo", "ok", "", 0.5]
    assert entry_of(old, None, "sqlite")[1].server == ""  # written before issue 39: /mcp's
    assert entry_of([*old, "support"], None, "sqlite")[1].server == "support"
    with pytest.raises(ValueError):
        entry_of([*old, "support", "extra"], None, "sqlite")
    with pytest.raises(TypeError):
        entry_of([*old, 7], None, "sqlite")
