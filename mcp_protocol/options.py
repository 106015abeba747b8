"""Which keyword options a backend class takes, and the refusal of any other.

A backend is built from a settings dict (``{"BACKEND": path, "OPTIONS": {...}}``, read by the
Django adapter). A misspelt key used to vanish into ``**options``; now the backend's constructor
raises ``UnknownOption`` naming it and the keys it knows, as Django's cache backends refuse what
they do not know, and the adapter's system check reports the same at startup with the setting's
name.

The kinds of backend (``Bus``, ``SessionStore``, ``EventStore``, ``TaskStore``, ``RateLimiter``,
``AuditSink``) set ``strict_options`` and refuse in their ``__init__`` what their subclasses left
over. A backend's known keys are the keyword parameters of every ``__init__`` of its MRO; a Redis
backend (one taking ``redis=``) knows the connection keys of ``redis_client.options.RedisOptions``
too, their one owner.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

CONNECTION_PARAMETER = "redis"  # a backend taking this keyword is built with a RedisOptions


class UnknownOption(TypeError):
    """A backend was given a keyword option it does not know (a TypeError, as Python's own)."""

    def __init__(self, owner: str, unknown: Iterable[str], known: Iterable[str]) -> None:
        self.owner = owner
        self.unknown = sorted(unknown)
        self.known = sorted(known)
        names = ", ".join(repr(k) for k in self.unknown)
        super().__init__(f"{owner} has no option {names}; its options are: {', '.join(self.known)}")


def _keywords(cls: type) -> set[str]:
    names: set[str] = set()
    for parameter in inspect.signature(cls.__init__).parameters.values():  # type: ignore[misc]
        if parameter.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            names.add(parameter.name)
    names.discard("self")
    return names


def takes_connection(cls: type) -> bool:
    """Whether ``cls`` is a Redis backend: built with ``redis=RedisOptions(...)``."""
    return CONNECTION_PARAMETER in _keywords(cls)


def known_options(cls: type) -> frozenset[str] | None:
    """The option keys ``cls`` accepts; None when it takes any (not a strict kind of backend,
    e.g. a provider, whose options are its own business)."""
    if not getattr(cls, "strict_options", False):
        return None
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is not object and "__init__" in vars(klass):
            names |= _keywords(klass)
    if CONNECTION_PARAMETER in names:
        from .redis_client.options import RedisOptions  # the connection keys' one owner

        names = (names - {CONNECTION_PARAMETER}) | RedisOptions.KEYS
    return frozenset(names)


def refuse_leftover(backend: object, leftover: dict[str, Any]) -> None:
    """What a kind of backend's ``__init__`` calls with the options no class of it took."""
    if leftover:
        cls = type(backend)
        raise UnknownOption(cls.__name__, leftover, known_options(cls) or ())


def unknown_options(cls: type, given: Iterable[str]) -> list[str]:
    """The keys of ``given`` that ``cls`` would refuse (for the adapter's system check)."""
    known = known_options(cls)
    return [] if known is None else sorted(set(given) - known)


def with_connection(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` for ``cls``'s constructor: for a Redis backend, its connection keys gathered
    into one ``RedisOptions`` passed as ``redis=`` (built once by whoever reads the settings)."""
    if not takes_connection(cls):
        return dict(options)
    from .redis_client.options import RedisOptions

    rest = dict(options)
    return rest | {CONNECTION_PARAMETER: RedisOptions.take(None, rest)}
