"""The state a worker needs to serve any request of any session, behind three contracts.

    sessions.py   ``SessionStore``: session records with a sliding idle expiry, the caps on live
                  sessions, the listings the fan-out and the session browsers read
    events.py     ``EventStore``: per-stream bounded logs for Last-Event-ID replay, and the
                  fan-out's broadcast into many sessions' logs
    tasks.py      ``TaskStore``: durable tasks (the tasks extension and 2025-11-25 tasks): created
                  before their ``CreateTaskResult``, answered, cancelled and leased by any worker
    claims.py     ``ClaimStore``: who among the workers holds what: a session's standalone GET
                  stream (``claim_stream``), a one-time job such as writing one change into
                  every log (``claim_once``)
    (the exception tree every contract and backend raises from is ../store_errors.py, beside
    the Redis wire client that raises StoreUnavailable too)

Backends, one package each, implement all three: ``memory/`` (one process; the reference) and
``redis/`` (shared by every worker: one server, Redis Cluster or Sentinel, through
``mcp_protocol.redis_client``). Settings choose them by dotted path
(``MCP["SESSION_STORE"]`` / ``MCP["EVENT_STORE"]``: ``{"BACKEND": ..., "OPTIONS": {...}}``, e.g.
``mcp_protocol.stores.redis.RedisEventStore``). The claim store needs no setting of its own: it
is the event store's ``claims``, built on the same backend (the same Redis connections and key
prefix), because what it arbitrates is who writes which stream; ``delete_session`` of the event
store drops the session's stream claim with its logs. Every backend passes the contract suites
in ``tests/contract/`` (``test_session_store.py``, ``test_event_store.py``,
``test_claim_store.py``), on memory, Redis, Redis Cluster and Sentinel.
"""
