"""Test helpers shared by integration, conformance, multi-worker and benchmark tests, one module per
concept: ``live_server`` (a server process), ``fleets`` (workers sharing a database and a private
Redis), ``ports``, ``manage`` (management commands), ``polling`` (waits with a deadline),
``asgi_call`` (one in-process request), ``conformance`` (the official suite)."""

from .live_server import MEMORY_PROVIDER, REGISTRY_PROVIDER, LiveServer, live_server_fixture
from .ports import free_port

__all__ = ["MEMORY_PROVIDER", "REGISTRY_PROVIDER", "LiveServer", "free_port", "live_server_fixture"]
