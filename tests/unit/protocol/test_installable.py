"""Taking the apps into another project: the registry serves once it is installed (no ``MCP``
setting to write), and the system checks name what is missing or ambiguous, with a hint."""

from __future__ import annotations

from django.conf import settings
from django.test import override_settings

from mcp_django.checks import check_mcp_settings
from mcp_django.conf import default, installed_providers, mcp_settings
from registry.checks import check_installed_together

REGISTRY = "registry.provider.RegistryProvider"
EXTRA_APP = "tests.unit.provider_app.apps.ProviderAppConfig"


def test_an_installed_registry_is_the_provider_when_the_setting_names_none() -> None:
    assert installed_providers() == [REGISTRY]
    assert default("PROVIDER") == {"BACKEND": REGISTRY, "OPTIONS": {}}
    with override_settings(MCP={"SERVER_NAME": "theirs"}):
        assert mcp_settings.PROVIDER["BACKEND"] == REGISTRY


def test_the_setting_wins_over_what_apps_declare() -> None:
    memory = {"BACKEND": "mcp_protocol.memory_provider.MemoryProvider", "OPTIONS": {}}
    with override_settings(MCP={"PROVIDER": memory}):
        assert mcp_settings.PROVIDER == memory


def test_two_apps_declaring_a_provider_need_the_setting_to_choose() -> None:
    with override_settings(INSTALLED_APPS=[*settings.INSTALLED_APPS, EXTRA_APP], MCP={}):
        messages = check_mcp_settings()
        assert [m.id for m in messages] == ["mcp.E007"]
        assert "PROVIDER" in (messages[0].hint or "")
        memory = {"BACKEND": "mcp_protocol.memory_provider.MemoryProvider", "OPTIONS": {}}
    with override_settings(INSTALLED_APPS=[*settings.INSTALLED_APPS, EXTRA_APP], MCP={"PROVIDER": memory}):
        assert check_mcp_settings() == []


def test_the_registry_without_mcp_django_is_an_error_with_a_hint() -> None:
    assert check_installed_together() == []
    apps_without = [app for app in settings.INSTALLED_APPS if app != "mcp_django"]
    with override_settings(INSTALLED_APPS=apps_without):
        messages = check_installed_together()
    assert [m.id for m in messages] == ["registry.E001"]
    assert "mcp_django" in (messages[0].hint or "")
