"""The process's MCP service: a ``RuntimeHost`` whose runtimes are built from the ``MCP`` setting.

``get_service()`` is built once per process, like ``django.contrib.admin.site``; the project hands
it to what serves with it: the endpoint (``routing.mcp_path``, and ``lifespan``), the operations
views and the management API (their URLconfs pass it as a view argument). Nothing else reaches
a runtime. On ``setting_changed`` for ``MCP`` (``override_settings(MCP=...)`` in tests) the
service forgets its runtime, and the next request builds one from the new settings (``conf``
drops its backends on the same signal).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

from mcp_protocol import tracing
from mcp_protocol.auth.policy import MODES, AccessPolicy
from mcp_protocol.auth.revocations import Revocations
from mcp_protocol.bus.base import Bus
from mcp_protocol.provider import ProviderCapabilities
from mcp_protocol.stores.events import EventStore
from mcp_protocol.stores.sessions import SessionStore
from mcp_protocol.tasks.runner import TaskRunner
from mcp_protocol.tracing import RequestTracing
from mcp_protocol.transports import gc_tuning, metrics
from mcp_protocol.transports.host import Backends, RuntimeHost
from mcp_protocol.transports.runtime import Runtime, TransportConfig, task_status_writer
from mcp_protocol.transports.security import OriginGuard

from . import servers
from .conf import DEFAULTS, access_settings, build_approvals, build_backend, build_server, mcp_settings


def build_access(bus: Bus, sessions: SessionStore, events: EventStore,
                 capabilities: ProviderCapabilities | None = None,
                 on_audit_drop: Callable[[str, int], None] | None = None) -> AccessPolicy:
    """The ``AccessPolicy`` of ``MCP["ACCESS"]``, with the objects its dotted paths name."""
    config = access_settings()
    mode = str(config["MODE"]).replace(" ", "")
    if mode not in MODES:  # before anything is built
        raise ValueError(f"MCP_AUTH must be one of {', '.join(MODES)}, not {mode!r}")
    key_source = _key_source(config["KEY_SOURCE"], required="keys" in mode.split(","))
    limiter_spec = config["RATE_LIMITER"]
    limiter = build_backend(import_string(limiter_spec["BACKEND"]), limiter_spec.get("OPTIONS", {}))
    sink = None
    if config["AUDIT_SINK"]:
        sink = build_backend(import_string(config["AUDIT_SINK"]), config["AUDIT_SINK_OPTIONS"] or {})
    jwks_source = config["OAUTH_JWKS_SOURCE"]
    # With an issuer, in every mode: a virtual server may accept tokens where MCP_AUTH does not.
    issuer = bool(config["OAUTH_ISSUER"])
    jwks_fetch = import_string(jwks_source) if issuer and jwks_source else None
    revoked = config["OAUTH_REVOCATIONS_SOURCE"]
    revocations = Revocations(import_string(revoked)) if issuer and revoked else None
    return AccessPolicy(config, bus, sessions, events, limiter=limiter, key_source=key_source,
                        audit_sink=sink, capabilities=capabilities, jwks_fetch=jwks_fetch,
                        revocations=revocations, on_audit_drop=on_audit_drop)


def _key_source(path: str | None, *, required: bool) -> Any:
    """The key source ``path`` names. In every mode: a virtual server may accept keys where
    MCP_AUTH does not (its ring starts only when one first checks a key: auth/policy.py). Where
    MCP_AUTH takes no keys, a project without the app of the key source (the default is the access
    app's; a project that embeds the endpoint alone has none) gets none: keys are then refused
    everywhere, as before virtual servers."""
    if not path:
        return None
    if required:
        return import_string(path)()
    try:
        return import_string(path)()
    except (ImportError, RuntimeError):  # RuntimeError: Django's "model … isn't in an application"
        return None


def transport_config() -> TransportConfig:
    close_after = mcp_settings.CLOSE_STREAM_AFTER_SECONDS
    return TransportConfig(
        always_stream=bool(mcp_settings.ALWAYS_STREAM),
        keepalive=float(mcp_settings.KEEPALIVE_SECONDS),
        retry_ms=int(mcp_settings.SSE_RETRY_MS),
        close_after=None if close_after is None else float(close_after),
        max_body=int(mcp_settings.MAX_BODY_BYTES),
        allowed_hosts=list(mcp_settings.ALLOWED_HOSTS),
        allowed_origins=list(mcp_settings.ALLOWED_ORIGINS),
        metrics=bool(mcp_settings.METRICS),
        shutdown_grace=float(mcp_settings.SHUTDOWN_GRACE_SECONDS),
    )


def build_runtime(loop: asyncio.AbstractEventLoop) -> Runtime:
    """A ``Runtime`` for ``loop``, every dependency read from the ``MCP`` setting."""
    config = transport_config()
    provider = mcp_settings.backend("PROVIDER")
    sessions = mcp_settings.backend("SESSION_STORE")
    events = mcp_settings.backend("EVENT_STORE")
    bus = mcp_settings.backend("BUS")
    # Each part gets what it needs in its constructor: the runtime wires nothing into them.
    measured = config.metrics
    access = build_access(bus, sessions, events, provider.capabilities,
                          on_audit_drop=metrics.audit_dropped if measured else None)
    server = build_server(provider, interceptor=access.guard, tracing=process_tracing(),
                          approvals=build_approvals(bus))
    server.on_search = metrics.tool_searched if measured else None
    ttl = mcp_settings.TASK_TTL_MS
    server.attach_tasks(TaskRunner(
        mcp_settings.backend("TASK_STORE"), bus, provider, lease=float(mcp_settings.TASK_LEASE_SECONDS),
        ttl_ms=None if ttl is None else int(ttl), poll_interval_ms=int(mcp_settings.TASK_POLL_INTERVAL_MS),
        immediate=float(mcp_settings.TASK_IMMEDIATE_SECONDS), legacy_status=task_status_writer(events),
        on_created=metrics.task_created if measured else None,
        on_started=metrics.tasks_running if measured else None,
        on_ended=metrics.task_run_ended if measured else None))
    guard = OriginGuard(config.allowed_hosts, config.allowed_origins, list(settings.ALLOWED_HOSTS),
                        hosts_setting="MCP_ALLOWED_HOSTS", origins_setting="MCP_ALLOWED_ORIGINS")
    # Left at its default (open mode), the resolver is MCP_AUTH's (the runtime's, from access).
    resolver = None
    if mcp_settings.PRINCIPAL_RESOLVER != DEFAULTS["PRINCIPAL_RESOLVER"]:
        resolver = mcp_settings.principal_resolver()
    return Runtime(loop, config=config, provider=provider, sessions=sessions, events=events, bus=bus,
                   server=server, access=access, guard=guard, resolve_principal=resolver)


_tracing: list[RequestTracing | None] = []


def process_tracing() -> RequestTracing | None:
    """The process's tracing (one tracer provider, whatever the loops), from the ``OTEL_*``
    environment on first use: None, and OpenTelemetry never imported, when it leaves it off."""
    if not _tracing:
        _tracing.append(tracing.from_environment())
    return _tracing[0]


def backends() -> Backends:
    return (mcp_settings.backend("SESSION_STORE"), mcp_settings.backend("EVENT_STORE"),
            mcp_settings.backend("BUS"))


def tune_gc() -> None:
    gc_tuning.apply(mcp_settings.GC_THRESHOLD)


async def close_backends(rt: Runtime) -> None:
    """After the runtime stopped: the clients of this loop of the stores and the bus it served
    with (built here, from settings: the runtime does not close what it did not make)."""
    tasks = rt.server.tasks
    for backend in (*(() if tasks is None else (tasks.store,)), rt.sessions, rt.events, rt.bus):
        with contextlib.suppress(Exception):
            await backend.close()


def build_service() -> RuntimeHost:
    return RuntimeHost(build_runtime, backends, on_started=tune_gc, on_built=servers.on_built,
                       close_backends=close_backends)


_service: RuntimeHost | None = None


def get_service() -> RuntimeHost:
    """This process's service (built on first use)."""
    global _service
    if _service is None:
        _service = build_service()
    return _service


def _forget(*, setting: str, **kwargs: Any) -> None:
    if setting == "MCP" and _service is not None:
        _service.forget()


setting_changed.connect(_forget)
