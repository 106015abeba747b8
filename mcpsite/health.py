"""Operations endpoints: ``/healthz`` (the process answers), ``/readyz`` (it can serve: database,
Redis and the MCP runtime with its bus subscription) and ``/metrics`` (Prometheus text format).

Django views, beside ``/mcp`` rather than in it: they are for the orchestrator and the scraper,
not MCP clients, and none of them is on the hot path. They are async so the readiness probe and
the scrape run on the server's event loop, where that loop's MCP runtime lives; ``urls.py`` hands
them the MCP service (``service``) that holds it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable

from asgiref.sync import sync_to_async
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST

from mcp_protocol.transports import metrics
from mcp_protocol.transports.host import RuntimeHost
from registry.upstreams import metrics as upstream_metrics

logger = logging.getLogger("mcpsite.health")
CHECK_TIMEOUT = 3.0  # s: a probe must answer well within a load balancer's probe timeout


async def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: the process serves HTTP. Checks nothing else, so a Redis outage does not get
    every worker restarted (readiness takes it out of rotation instead)."""
    return HttpResponse("ok\n", content_type="text/plain")


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


async def _check(name: str, checks: dict[str, str], probe: Awaitable[object]) -> None:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT):
            await probe
        checks[name] = "ok"
    except Exception as exc:  # every failure is "not ready", named, never a 500
        checks[name] = f"unavailable: {type(exc).__name__}"


async def _runtime_ready(service: RuntimeHost) -> None:
    if not service.ready():
        # Started at process startup (RuntimeHost.startup) and retried in the background when
        # that failed; a server that sent no lifespan gets it started here, as a request would.
        await service.runtime()
        if not service.ready():
            raise RuntimeError("the MCP runtime is not subscribed to the bus")
    rt = await service.runtime()
    await rt.sessions.count()  # a round trip to the session store (Redis when REDIS_URL is set)


async def readyz(request: HttpRequest, service: RuntimeHost) -> HttpResponse:
    """Readiness: 200 when the database, the session store / bus (Redis) and the MCP runtime all
    answer; 503 naming the failing part otherwise. Safe to poll: no writes."""
    checks: dict[str, str] = {}
    await _check("database", checks, sync_to_async(_database)())
    await _check("mcp", checks, _runtime_ready(service))
    ready = all(v == "ok" for v in checks.values())
    if not ready:
        logger.warning("not ready: %s", checks)
    return JsonResponse({"ready": ready, "checks": checks}, status=200 if ready else 503)


async def metrics_view(request: HttpRequest, service: RuntimeHost) -> HttpResponse:
    """Prometheus exposition (``mcp_protocol/transports/metrics.py`` lists the metrics)."""
    sessions: int | None = None
    try:
        async with asyncio.timeout(CHECK_TIMEOUT):
            sessions = await (await service.runtime()).sessions.count()
    except Exception:  # Redis down: the scrape still answers, without the session gauge
        metrics.store_unavailable()
    audit: dict[str, float] | None = None
    try:
        queue = (await service.runtime()).access.audit
        if queue is not None:
            async with asyncio.timeout(CHECK_TIMEOUT):
                audit = await queue.sink.status()  # the Redis spool's backlog
    except Exception:  # its Redis down: the scrape still answers, without those gauges
        metrics.store_unavailable()
    body = metrics.exposition(sessions, audit)
    try:  # upstream MCP servers' health (issue 40), read from their rows
        body += await sync_to_async(upstream_metrics.exposition)()
    except Exception:  # the database down: the scrape still answers, without those gauges
        logger.warning("upstream gauges unavailable", exc_info=True)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
