"""A test app that declares a provider, like the registry does (tests/unit/protocol/test_installable.py)."""

from django.apps import AppConfig


class ProviderAppConfig(AppConfig):
    name = "tests.unit.provider_app"
    label = "provider_app"
    mcp_provider = "mcp_protocol.memory_provider.MemoryProvider"
