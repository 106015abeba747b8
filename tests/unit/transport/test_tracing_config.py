"""Tracing is configured by the standard OTEL_* environment only, and with it off the trace SDK is
never imported (mcp_protocol/tracing/config.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mcp_protocol.tracing import tracing_enabled
from tests.support.live_server import MEMORY_PROVIDER
from tests.support.manage import ROOT


@pytest.mark.parametrize(
    ("environ", "on"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, False),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, False),
        ({"OTEL_SERVICE_NAME": "mcpsite"}, False),  # naming the service exports nothing
    ],
)
def test_the_otel_environment_turns_tracing_on(environ: dict[str, str], on: bool) -> None:
    assert tracing_enabled(environ) is on


LOADED_ONLY_TO_TRACE = ("opentelemetry.sdk.trace", "opentelemetry.exporter", "mcp_protocol.tracing.otel")


def test_with_tracing_off_a_worker_never_imports_the_trace_sdk() -> None:
    # redis-py imports OpenTelemetry's metrics SDK by itself when it is installed (its
    # redis.observability): what tracing would add is the trace SDK, its exporters and our spans.
    code = (
        f"LOADED_ONLY_TO_TRACE = {LOADED_ONLY_TO_TRACE!r}\n"
        "import asyncio, sys, django; django.setup()\n"
        "from mcp_django import service\n"
        "async def main():\n"
        "    async with service.build_runtime(asyncio.get_running_loop()).run():\n"
        "        pass\n"
        "asyncio.run(main())\n"
        "assert service.process_tracing() is None\n"
        "print(sorted(m for m in sys.modules if m.startswith(LOADED_ONLY_TO_TRACE)))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(DJANGO_SETTINGS_MODULE="mcpsite.settings", MCP_PROVIDER=MEMORY_PROVIDER)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
