"""The system checks of the ``MCP`` setting (mcp_django/checks.py): each mistake is named."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from mcp_django.checks import check_mcp_settings


def ids(mcp: dict[str, Any]) -> list[str]:
    with override_settings(MCP=mcp):
        return [m.id or "" for m in check_mcp_settings()]


def test_the_default_and_project_settings_pass() -> None:
    assert check_mcp_settings() == []
    assert ids({}) == []


@pytest.mark.parametrize(("mcp", "expected"), [
    ({"SESION_TTL": 10}, "mcp.E001"),
    ({"BUS": "mcp_protocol.bus.memory.MemoryBus"}, "mcp.E002"),
    ({"BUS": {"BACKEND": "mcp_protocol.bus.nowhere.Bus"}}, "mcp.E003"),
    ({"EVENT_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemorySessionStore"}}, "mcp.E004"),
    ({"SESSION_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemorySessionStore", "OPTIONS": []}},
     "mcp.E005"),
    ({"MAX_BODY_BYTES": 0}, "mcp.E006"),
    ({"KEEPALIVE_SECONDS": "15"}, "mcp.E006"),
    ({"CLOSE_STREAM_AFTER_SECONDS": -1}, "mcp.E006"),
])
def test_each_mistake_is_reported_with_its_setting(mcp: dict[str, Any], expected: str) -> None:
    assert ids(mcp) == [expected]
