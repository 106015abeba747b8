"""Tracing is configured by the standard OpenTelemetry environment variables only
(https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/): it is on when
``OTEL_TRACES_EXPORTER`` names an exporter (``otlp``, ``console``) or an OTLP endpoint is set, and
``OTEL_SDK_DISABLED`` is not ``true``. The rest (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_TRACES_SAMPLER`` and its argument, ``OTEL_EXPORTER_OTLP_*`` endpoint, protocol, headers,
timeout) is read by the OpenTelemetry SDK itself."""

from __future__ import annotations

import os
from collections.abc import Mapping

from .base import RequestTracing


def tracing_enabled(environ: Mapping[str, str]) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = environ.get("OTEL_TRACES_EXPORTER")
    if exporter is not None:
        return exporter.strip().lower() not in ("", "none")
    endpoints = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    return any(environ.get(name) for name in endpoints)


def from_environment(environ: Mapping[str, str] | None = None) -> RequestTracing | None:
    """The process's tracing, or None when the environment leaves it off (nothing imported)."""
    environ = os.environ if environ is None else environ
    if not tracing_enabled(environ):
        return None
    from .otel import OtelTracing  # only now: the SDK is an optional extra (pip install mcpsite[otel])

    return OtelTracing.from_environment(environ)
