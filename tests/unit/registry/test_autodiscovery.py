"""``mcp_handlers.py`` of every installed app is imported at startup (like ``admin.py``), so a
second app's handlers join the allow-list; an app that is not installed contributes nothing."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import override_settings

from registry import handlers
from registry.models import Tool
from registry.provider import RegistryProvider

from .conftest import make_context

APP = "tests.unit.registry.handlers_app"
MODULE = f"{APP}.mcp_handlers"
TOOL, RESOURCE = "handlers_app.ping", "handlers_app.note"


def forget_test_app() -> None:
    handlers.unregister("tool", TOOL)
    handlers.unregister("resource", RESOURCE)
    sys.modules.pop(MODULE, None)  # so the next discovery imports (and registers) it again


@pytest.fixture
def clean_slate() -> Iterator[None]:
    forget_test_app()
    yield
    forget_test_app()


def test_handlers_of_an_app_that_is_not_installed_are_not_registered(clean_slate: None) -> None:
    handlers.autodiscover()
    assert TOOL not in handlers.names("tool")
    assert MODULE not in sys.modules


def test_installing_a_second_app_registers_its_mcp_handlers_through_autodiscovery(clean_slate: None) -> None:
    # override_settings repopulates the app registry, which runs RegistryConfig.ready(): the
    # same entry point as startup.
    with override_settings(INSTALLED_APPS=[*settings.INSTALLED_APPS, APP]):
        assert TOOL in handlers.names("tool")
        assert RESOURCE in handlers.names("resource")
        handlers.autodiscover()  # a second discovery (autoreload) is harmless
        assert handlers.get("tool", TOOL).__module__ == MODULE


@pytest.mark.django_db
def test_a_tool_row_can_name_a_handler_from_the_second_app(clean_slate: None) -> None:
    with override_settings(INSTALLED_APPS=[*settings.INSTALLED_APPS, APP]):
        row = Tool(name="ping", description="d", kind="handler", handler=TOOL)
        row.full_clean()
        row.save()
        provider = RegistryProvider()
        tool = provider.snapshot().tool("ping")
        assert tool is not None
        result = asyncio.run(provider.call_tool(tool, {}, make_context()))
    assert result == {"content": [{"type": "text", "text": "pong from handlers_app"}]}
