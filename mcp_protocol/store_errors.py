"""What the stores raise on purpose, for every contract and every backend.

Exception tree::

    StoreError                 base of everything a store raises on purpose
    ├── CreateError            SessionStore.create() of an id that already exists
    ├── UpdateError            SessionStore.save() of a session that vanished (expired or deleted)
    ├── SessionLimitReached    SessionStore.create() past a cap on live sessions (overall or per
    │                          principal)
    ├── TaskLimitReached       TaskStore.create() past the cap on a principal's unfinished tasks
    ├── UnknownEvent           a Last-Event-ID that is malformed, of another stream, or evicted
    ├── StreamLagging          an EventStore.listen() reader fell so far behind that events would
    │                          be skipped
    └── StoreUnavailable       the backend cannot be reached (Redis down): a 503, nothing kept
                               aside (the bus, the rate limiter and the audit spool raise it too)

A module of exceptions only, importing nothing: the Redis wire client (``redis_client``) raises
``StoreUnavailable`` without depending on the store contracts.
"""

from __future__ import annotations


class StoreError(Exception):
    pass


class CreateError(StoreError):
    pass


class UpdateError(StoreError):
    pass


class SessionLimitReached(StoreError):
    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class TaskLimitReached(StoreError):
    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class UnknownEvent(StoreError):
    pass


class StreamLagging(StoreError):
    """Raised by ``listen`` instead of skipping events: its reader (a slow SSE client) fell
    behind by more than the store keeps for it. The stream ends; the client resumes with its
    Last-Event-ID and gets the rest, or ``UnknownEvent`` if the log no longer has them."""


class StoreUnavailable(StoreError):
    pass
