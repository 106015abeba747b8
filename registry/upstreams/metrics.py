"""Upstream health on ``/metrics`` (read from the rows at scrape time: the sync writes them).

    mcp_upstream_health{upstream, state}       gauge 1 for the upstream's state (up | degraded |
                                               down | unknown), 0 for the others
    mcp_upstream_last_sync_age_seconds{upstream}  gauge: seconds since the last sync attempt
    mcp_upstream_last_ok_age_seconds{upstream}    gauge: seconds since the last sync that listed
    mcp_upstream_latency_ms{upstream}             gauge: the last handshake's duration

``upstream`` is the operator's name: the first ``MAX_UPSTREAM_LABELS`` (by name) keep theirs, the
rest are summed into ``_other`` (health counts per state), like the virtual servers' label.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ..models.upstreams import Upstream

MAX_UPSTREAM_LABELS = 100
OTHER = "_other"
STATES = [str(value) for value in Upstream.Health.values]


class UpstreamCollector(Collector):
    def collect(self) -> Iterable[Metric]:
        health = GaugeMetricFamily("mcp_upstream_health", "Upstream health: 1 for its state.",
                                   labels=["upstream", "state"])
        sync_age = GaugeMetricFamily("mcp_upstream_last_sync_age_seconds", "Seconds since the last sync.",
                                     labels=["upstream"])
        ok_age = GaugeMetricFamily("mcp_upstream_last_ok_age_seconds",
                                   "Seconds since the last sync that listed the upstream.",
                                   labels=["upstream"])
        latency = GaugeMetricFamily("mcp_upstream_latency_ms", "The last sync's handshake, in ms.",
                                    labels=["upstream"])
        now = timezone.now()
        rows = list(Upstream.objects.filter(enabled=True).order_by("name")
                    .values_list("name", "health", "last_sync_at", "last_sync_ok_at", "latency_ms"))
        other = dict.fromkeys(STATES, 0.0)
        for index, (name, state, synced, ok, ms) in enumerate(rows):
            if index >= MAX_UPSTREAM_LABELS:
                other[state] = other.get(state, 0.0) + 1
                continue
            for s in STATES:
                health.add_metric([name, s], 1.0 if s == state else 0.0)
            if synced is not None:
                sync_age.add_metric([name], (now - synced).total_seconds())
            if ok is not None:
                ok_age.add_metric([name], (now - ok).total_seconds())
            if ms is not None:
                latency.add_metric([name], float(ms))
        if len(rows) > MAX_UPSTREAM_LABELS:
            for s, count in other.items():
                health.add_metric([OTHER, s], count)
        yield from (health, sync_age, ok_age, latency)


def exposition() -> bytes:
    """The upstream gauges as Prometheus text, appended to the endpoint's own (synchronous ORM)."""
    registry = CollectorRegistry()
    registry.register(UpstreamCollector())
    return generate_latest(registry)
