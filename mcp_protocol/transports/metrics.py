"""Prometheus metrics of the ``/mcp`` endpoint, recorded in one place: ``record()``, called once
per request by ``MCPEndpoint.__call__`` after the response went out.

What the endpoint knows about a request (its JSON-RPC method, era, the tool and the response) it
leaves in the ASGI ``scope`` under ``mcp.*`` keys, plain dict stores on the hot path; ``record``
counts them in this process's ``Tally`` (``tally.py``: about 3 µs a tools/call, against 6-11 µs
through prometheus_client's value objects), which a scrape reads. Streams and the bus report
through ``stream_opened``/``stream_closed`` and ``on_bus_message`` (not the hot path). Every label
value comes from a bounded set: a method outside the method tables is ``other``, a tool not in the
registry is ``unknown``, so a client cannot grow the series without limit.

Several worker processes on one host: with ``PROMETHEUS_MULTIPROC_DIR`` set (before this module is
imported: ``scripts/fleet.sh`` does it), every process flushes its tally to its file in that
directory (``FLUSH_SECONDS`` after a request, and at every scrape of it) and a scrape of any
worker reports the sum of all of them (``exposition()``); ``mcp_open_streams`` sums
the live processes only. Without it, each process reports its own (one scrape target per worker:
compose, or several hosts). ``mcp_sessions_active`` is read from the session store at scrape
time, so it is the cluster-wide count either way.

Metric names and types:

    mcp_requests_total{http_method, rpc_method, status, era, server}  counter (server: the slug)
    mcp_tool_calls_total{tool, outcome}                            counter (outcome ok | error)
    mcp_tool_call_duration_seconds{tool}                           histogram
    mcp_open_streams                                               gauge (SSE responses open)
    mcp_sessions_active                                            gauge (live sessions, store-wide)
    mcp_bus_delivery_lag_seconds                                   histogram (commit → this worker)
    mcp_redis_errors_total{where}                                  counter (store | bus)
    mcp_audit_dropped_total{reason}                                counter (queue_full | write_failed
                                                                   | sink_full)
    mcp_tasks_created_total                                        counter (tasks made by this worker)
    mcp_tasks_finished_total{status}                               counter (completed | failed | cancelled
                                                                   by this worker's runs; input_required:
                                                                   a run parked on a question)
    mcp_task_duration_seconds{status}                              histogram (creation → that end)
    mcp_tasks_running                                              gauge (runs on this worker)
    mcp_audit_spool_entries, mcp_audit_spool_pending,              gauges (the Redis audit spool, read
    mcp_audit_spool_drain_alive                                    at scrape time: store-wide)
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterable, Iterator, MutableMapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from ..bus.base import RESYNC
from ..compat.prometheus_client import add_observations
from ..endpoints import SCOPE_KEY, EndpointSpec
from ..method_table import LEGACY_METHODS, MODERN_METHODS
from ..provider import Provider
from .tally import Tally

Scope = MutableMapping[str, Any]

METHOD = "mcp.method"  # the JSON-RPC method of a single request or notification
ERA = "mcp.era"  # "legacy" (sessions) or "modern" (2026-07-28, stateless)
TOOL = "mcp.tool"  # tools/call: the tool name asked for (a call_tool's: the tool it wraps)
META_TOOL = "mcp.meta_tool"  # tools/call of a tool search meta-tool (search_tools): counted by its name
RESPONSE = "mcp.response"  # tools/call: the JSON-RPC response object, when there is one

KNOWN_METHODS = frozenset(LEGACY_METHODS) | frozenset(MODERN_METHODS) | {
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
    "response",  # a client's answer to a server→client request
    "batch",
}
REQUEST_LABELS = ["http_method", "rpc_method", "status", "era", "server"]
# The label of requests on the catch-all /mcp, and of slugs past the bound (not a slug: SLUG).
CATCH_ALL_LABEL, OTHER_SERVERS = "", "_other"
MAX_SERVER_LABELS = 100
TOOL_LABELS = ["tool", "outcome"]
STATUS = {code: str(code) for code in (200, 202, 400, 404, 406, 409, 413, 415, 421, 500, 503)}
# prometheus_client picks its value storage at import from this variable; so does this module.
_MULTIPROCESS = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
TOOL_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)

# Hot-path metrics: counted in a Tally (tally.py) and exported from it. The prometheus_client
# objects below only carry them into the multiprocess files (registry=None: never exported twice).
REQUESTS = Counter("mcp_requests", "Requests to /mcp.", REQUEST_LABELS, registry=None)
TOOL_CALLS = Counter("mcp_tool_calls", "tools/call requests answered.", TOOL_LABELS, registry=None)
TOOL_DURATION = Histogram(
    "mcp_tool_call_duration_seconds",
    "tools/call time on the server, request to response.",
    ["tool"],
    buckets=TOOL_BUCKETS,
    registry=None,
)
OPEN_STREAMS = Gauge("mcp_open_streams", "SSE responses open.", multiprocess_mode="livesum")
BUS_LAG = Histogram(
    "mcp_bus_delivery_lag_seconds",
    "From a registry change's publication to its arrival here.",
    buckets=LAG_BUCKETS,
)
REDIS_ERRORS = Counter("mcp_redis_errors", "Redis unreachable or failing.", ["where"])
AUDIT_DROPPED = Counter("mcp_audit_dropped", "Audit entries dropped, never stored.", ["reason"])
AUDIT_GAUGES = {
    "spool_entries": "Entries in the Redis audit spool (waiting, or being written by a drain).",
    "spool_pending": "Spool entries a drain read and has not acknowledged yet.",
    "spool_drain_alive": "1 if a drain_audit process was seen in the last 30 s.",
}
# Tool search (methods/tool_search.py): search_tools calls per server, never what was asked.
TOOL_SEARCHES = Counter("mcp_tool_searches", "search_tools calls answered, by server.", ["server"])
TASKS_CREATED = Counter("mcp_tasks_created", "Tasks made by this worker.")
TASKS_FINISHED = Counter("mcp_tasks_finished", "Task runs ended on this worker, by the status they left.",
                         ["status"])
TASK_DURATION = Histogram(
    "mcp_task_duration_seconds", "From a task's creation to the end of a run of it, by status.", ["status"],
    buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600),
)
TASKS_RUNNING = Gauge("mcp_tasks_running", "Task runs on this worker.", multiprocess_mode="livesum")
FLUSH_SECONDS = 1.0  # multiprocess: how late another worker's scrape may see this one's counts

_tally = Tally(TOOL_BUCKETS)
_flush_armed = False


_server_labels: dict[str, str] = {}


def server_label(spec: EndpointSpec | None) -> str:
    """The ``server`` label of a request routed to ``spec`` (``None``: the catch-all)."""
    if spec is None:
        return CATCH_ALL_LABEL
    label = _server_labels.get(spec.slug)
    if label is None:
        # The first MAX_SERVER_LABELS slugs keep theirs for the process's life; later ones share one.
        label = spec.slug if len(_server_labels) < MAX_SERVER_LABELS else OTHER_SERVERS
        _server_labels[spec.slug] = label
    return label


def record(scope: Scope, status: int, seconds: float, provider: Provider) -> None:
    """Count one request (the provider's snapshot says which tool names are real)."""
    method = scope.get(METHOD)
    rpc_method = method if method in KNOWN_METHODS else ("-" if method is None else "other")
    spec = scope.get(SCOPE_KEY)
    server = CATCH_ALL_LABEL if spec is None else server_label(spec)
    _tally.request(
        (scope["method"], rpc_method, STATUS.get(status) or str(status), scope.get(ERA, "-"), server)
    )
    if method == "tools/call":
        name = scope.get(TOOL)
        tool = "unknown"
        if isinstance(name, str) and (scope.get(META_TOOL) or provider.snapshot().tool(name) is not None):
            tool = name
        response = scope.get(RESPONSE)
        failed = (
            status != 200
            or not isinstance(response, dict)
            or "result" not in response
            or bool(response["result"].get("isError"))
        )
        _tally.tool_call(tool, failed, seconds)
    if _MULTIPROCESS and not _flush_armed:
        _arm_flush()


def _arm_flush() -> None:
    global _flush_armed
    _flush_armed = True
    asyncio.get_running_loop().call_later(FLUSH_SECONDS, flush)


def flush() -> None:
    """Multiprocess mode: add the counts since the last flush to this process's sample files."""
    global _flush_armed
    _flush_armed = False
    taken = _tally.take()
    for request, requests in taken.requests.items():
        REQUESTS.labels(*request).inc(requests)
    for call, calls in taken.tool_calls.items():
        TOOL_CALLS.labels(*call).inc(calls)
    for tool in taken.durations:
        # Whole buckets at once: Histogram has no public "add n observations" (observe() is one).
        add_observations(TOOL_DURATION.labels(tool), taken.buckets(tool), taken.duration_sum(tool))


class _TallyCollector(Collector):
    """One process's hot-path metrics, read from its tally at scrape time (never reset)."""

    def collect(self) -> Iterable[Metric]:
        requests = CounterMetricFamily("mcp_requests", "Requests to /mcp.", labels=REQUEST_LABELS)
        for request, count in _tally.requests.items():
            requests.add_metric(request, count)
        calls = CounterMetricFamily("mcp_tool_calls", "tools/call requests answered.", labels=TOOL_LABELS)
        for call, made in _tally.tool_calls.items():
            calls.add_metric(call, made)
        durations = HistogramMetricFamily(
            "mcp_tool_call_duration_seconds",
            "tools/call time on the server, request to response.",
            labels=["tool"],
        )
        for tool in _tally.durations:
            durations.add_metric([tool], list(_tally.cumulative_buckets(tool)), _tally.duration_sum(tool))
        yield from (requests, calls, durations)


def stream_opened() -> None:
    OPEN_STREAMS.inc()


def stream_closed() -> None:
    OPEN_STREAMS.dec()


def on_bus_message(message: dict[str, Any]) -> None:
    """A change arrived from the bus: its lag (publishers stamp ``at``, wall clock), or a RESYNC
    (the bus was cut off from Redis)."""
    if message == RESYNC:
        REDIS_ERRORS.labels("bus").inc()
        return
    at = message.get("at")
    if isinstance(at, int | float) and not isinstance(at, bool):
        BUS_LAG.observe(max(0.0, time.time() - at))


def store_unavailable() -> None:
    REDIS_ERRORS.labels("store").inc()


def tool_searched(endpoint_key: str) -> None:
    """A ``search_tools`` call answered on the endpoint ``endpoint_key`` (a slug, or the catch-all's
    ``""``), under the same bounded ``server`` labels as the requests."""
    if endpoint_key == CATCH_ALL_LABEL:
        label = CATCH_ALL_LABEL
    else:
        label = _server_labels.get(endpoint_key) or (
            endpoint_key if len(_server_labels) < MAX_SERVER_LABELS else OTHER_SERVERS)
        _server_labels.setdefault(endpoint_key, label)
    TOOL_SEARCHES.labels(label).inc()


def task_created() -> None:
    TASKS_CREATED.inc()


def task_run_ended(status: str, seconds: float, running: int) -> None:
    """A run of a task ended, leaving it ``status`` (``running``: runs still on this worker)."""
    TASKS_FINISHED.labels(status).inc()
    TASK_DURATION.labels(status).observe(max(0.0, seconds))
    TASKS_RUNNING.set(running)


def tasks_running(running: int) -> None:
    TASKS_RUNNING.set(running)


def audit_dropped(reason: str, count: int) -> None:
    AUDIT_DROPPED.labels(reason).inc(count)


class _Sessions(Collector):
    def __init__(self, count: int | None, audit: dict[str, float] | None = None) -> None:
        self.count, self.audit = count, audit or {}

    def collect(self) -> Iterable[Metric]:
        if self.count is not None:
            yield GaugeMetricFamily("mcp_sessions_active", "Live MCP sessions (store-wide).", self.count)
        for name, value in self.audit.items():
            yield GaugeMetricFamily(f"mcp_audit_{name}", AUDIT_GAUGES.get(name, name), value)




def exposition(active_sessions: int | None, audit: dict[str, float] | None = None) -> bytes:
    """The text exposition: this process's metrics, or every process's with a multiprocess dir;
    ``audit``: the audit sink's gauges (``AuditSink.status``), read at scrape time."""
    from prometheus_client import REGISTRY, multiprocess

    registry = CollectorRegistry()
    if _MULTIPROCESS:
        flush()  # this process's latest counts; the others' are at most FLUSH_SECONDS old
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry.register(_Default(REGISTRY))
        registry.register(_TallyCollector())
    registry.register(_Sessions(active_sessions, audit))
    return generate_latest(registry)


class _Default(Collector):
    """The process's default registry (our metrics plus the process and platform collectors)."""

    def __init__(self, source: CollectorRegistry) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        yield from self.source.collect()


def process_exiting() -> None:
    """Hand over the last counts and drop this process's live gauges from a multiprocess
    directory (``livesum``)."""
    if _MULTIPROCESS:
        flush()
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]


def open_streams() -> float:
    """SSE responses open now: on this host's workers with a multiprocess directory, else in this
    process (the landing page's count)."""
    if _MULTIPROCESS:
        from prometheus_client import multiprocess

        collector = multiprocess.MultiProcessCollector(None)  # type: ignore[no-untyped-call]
        for family in collector.collect():  # type: ignore[no-untyped-call]
            if family.name == "mcp_open_streams":
                return float(sum(sample.value for sample in family.samples))
        return 0.0
    return float(sum(sample.value for family in OPEN_STREAMS.collect() for sample in family.samples))
