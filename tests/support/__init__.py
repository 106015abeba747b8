"""Test helpers shared by integration, conformance, multi-worker and benchmark tests."""

from .live_server import MEMORY_PROVIDER, REGISTRY_PROVIDER, LiveServer, free_port, live_server_fixture

__all__ = ["MEMORY_PROVIDER", "REGISTRY_PROVIDER", "LiveServer", "free_port", "live_server_fixture"]
