"""Who is calling (``Principal``) and what they may use (``Grant``).

A principal is resolved by the transport for every request (an API key, a JWT, or nobody in open
mode) and made current with ``bind`` for the rest of that request, so the core can filter what it
lists and refuse what it must not run without the transport passing it through every call. Its
``id`` is what sessions are bound to (``Session.principal``); ``None`` is the anonymous caller of
open mode and stdio. Nothing here does I/O.
"""

from __future__ import annotations

import contextvars
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

WILDCARD = "*"


def _names(values: Iterable[str] | None) -> frozenset[str] | None:
    if values is None:
        return None
    names = frozenset(str(v) for v in values)
    return None if WILDCARD in names else names


@dataclass(frozen=True, slots=True)
class Grant:
    """Sets of tools, resources (URIs and URI templates) and prompts, plus tags.

    ``None`` for a kind means every definition of it; a definition is also granted when it
    carries one of ``tags``. ``Grant()`` grants everything.
    """

    tools: frozenset[str] | None = None
    resources: frozenset[str] | None = None
    prompts: frozenset[str] | None = None
    tags: frozenset[str] = frozenset()
    digest: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.digest:
            parts = [sorted(s) if s is not None else None for s in (self.tools, self.resources, self.prompts)]
            text = repr((parts, sorted(self.tags)))
            object.__setattr__(self, "digest", hashlib.sha256(text.encode()).hexdigest()[:16])

    @classmethod
    def of(cls, *, tools: Iterable[str] | None = None, resources: Iterable[str] | None = None,
           prompts: Iterable[str] | None = None, tags: Iterable[str] = ()) -> Grant:
        """From lists as kept in settings or a database; ``"*"`` in a list means all of that kind."""
        return cls(_names(tools), _names(resources), _names(prompts), frozenset(tags))

    @classmethod
    def from_spec(cls, spec: object) -> Grant:
        """From ``{"tools": [...], "resources": [...], "prompts": [...], "tags": [...]}``: a kind
        left out is granted in full only when the spec names no kind at all (``{}``)."""
        if not isinstance(spec, dict):
            raise ValueError(f"a grant must be an object, not {spec!r}")
        unknown = set(spec) - {"tools", "resources", "prompts", "tags"}
        if unknown:
            raise ValueError(f"unknown grant keys: {sorted(unknown)}")
        if not spec:
            return ALL
        return cls.of(tools=spec.get("tools", ()), resources=spec.get("resources", ()),
                      prompts=spec.get("prompts", ()), tags=spec.get("tags", ()))

    @property
    def everything(self) -> bool:
        return self.tools is None and self.resources is None and self.prompts is None

    def union(self, other: Grant) -> Grant:
        """What either grants (several OAuth scopes held by one token)."""
        def join(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
            return None if a is None or b is None else a | b

        return Grant(join(self.tools, other.tools), join(self.resources, other.resources),
                     join(self.prompts, other.prompts), self.tags | other.tags)

    def covers(self, other: Grant) -> bool:
        """Does this grant allow everything ``other`` does? (A broader OAuth scope implies a
        narrower one: MCP authorization, 2026-07-28, "Step-Up Authorization Flow".)"""
        for kind in ("tools", "resources", "prompts"):
            mine, theirs = getattr(self, kind), getattr(other, kind)
            if mine is not None and (theirs is None or not theirs <= mine):
                return False
        return other.tags <= self.tags

    def allows(self, kind: str, name: str, tags: Iterable[str] = ()) -> bool:
        names: frozenset[str] | None = getattr(self, kind)
        if names is None or name in names:
            return True
        return bool(self.tags) and not self.tags.isdisjoint(tags)


ALL = Grant()
NOTHING = Grant(frozenset(), frozenset(), frozenset())


@dataclass(frozen=True, slots=True)
class Rate:
    """A token bucket: ``capacity`` requests at once, refilled at ``per_second``."""

    capacity: int
    per_second: float

    @classmethod
    def parse(cls, text: str | None) -> Rate | None:
        """``"N/S"``: N requests per S seconds (burst N); empty or ``None`` → no limit."""
        if text is None or not str(text).strip():
            return None
        count, _, seconds = str(text).partition("/")
        n, s = int(count), float(seconds or 1)
        if n <= 0 or s <= 0:
            raise ValueError(f"a rate must be N/S with N, S > 0, not {text!r}")
        return cls(n, n / s)


@dataclass(frozen=True, slots=True)
class Principal:
    id: str | None
    grant: Grant = ALL
    label: str = "anonymous"  # for the audit log and logs: a key prefix or an issuer/subject
    rate: Rate | None = None  # overrides the default per-principal rate (a key's own limit)
    tool_rate: Rate | None = None  # overrides the default per-tool rate
    # When its credential stops working (epoch seconds: a key's expiry, a token's exp); streams
    # opened with it end then (transports/get_stream.py, methods/subscriptions.py).
    expires_at: float | None = None
    scopes: tuple[str, ...] = ()  # an OAuth token's scopes, for a step-up challenge (auth/step_up.py)
    # An OAuth token's sub, client_id and iat: what a revoked grant is matched on (auth/revocations.py).
    token: tuple[str, str, float] | None = None


ANONYMOUS = Principal(None)

_current: contextvars.ContextVar[Principal] = contextvars.ContextVar("mcp_principal", default=ANONYMOUS)


def current() -> Principal:
    """The principal of the request being served (``ANONYMOUS`` where no transport bound one)."""
    return _current.get()


def bind(principal: Principal) -> contextvars.Token[Principal]:
    """Make ``principal`` current for this task and the tasks it starts (handlers inherit it)."""
    return _current.set(principal)


def unbind(token: contextvars.Token[Principal]) -> None:
    _current.reset(token)


@dataclass(frozen=True, slots=True)
class Presented:
    """The OAuth access token a caller presented, kept for the request only so a token exchange
    (RFC 8693: the caller's token is the subject token) can hand it on. Held in a context variable
    (``present``), never in the ``Principal`` (which sessions, audit rows and spans name): left
    out of ``repr``, not comparable, and not picklable, so no log line, traceback, cache or task
    store can carry it by accident."""

    principal: str | None
    token: str = field(repr=False, compare=False)

    def __reduce__(self) -> Any:
        raise TypeError("a presented token is never serialised")


_presented: contextvars.ContextVar[Presented | None] = contextvars.ContextVar("mcp_presented", default=None)


def present(principal: Principal, token: str) -> contextvars.Token[Presented | None]:
    """Keep ``token`` (``principal``'s verified OAuth access token) for this request's tasks."""
    return _presented.set(Presented(principal.id, token))


def withdraw(token: contextvars.Token[Presented | None]) -> None:
    _presented.reset(token)


def presented(principal_id: str | None) -> str | None:
    """The access token ``principal_id`` presented on this request; None for anyone else (an API
    key, open mode, a principal that is not the one the token came with)."""
    held = _presented.get()
    if held is None or principal_id is None or held.principal != principal_id:
        return None
    return held.token
