"""The system check that keeps production from being open by accident (``access/checks.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings

from access.checks import check_access


def _ids(**access: Any) -> list[str]:
    mcp = {**settings.MCP, "ACCESS": {**settings.MCP.get("ACCESS", {}), **access}}
    with override_settings(MCP=mcp):
        return [m.id for m in check_access()]


@pytest.mark.parametrize(("debug", "hosts", "mode", "expected"), [
    (False, ["mcp.example.com"], "open", ["mcp.E101"]),
    (False, ["*"], "open", ["mcp.E101"]),
    (False, ["127.0.0.1", "localhost", "[::1]"], "open", []),
    (True, ["mcp.example.com"], "open", []),
    (False, ["mcp.example.com"], "keys", []),
])
def test_open_mode_with_debug_off_and_a_public_host_fails(debug: bool, hosts: list[str], mode: str,
                                                          expected: list[str]) -> None:
    with override_settings(DEBUG=debug, ALLOWED_HOSTS=hosts):
        assert _ids(MODE=mode) == expected


@override_settings(DEBUG=True)
def test_bad_access_settings_are_named() -> None:
    assert _ids(MODE="closed") == ["mcp.E102"]
    assert _ids(RATE="ten") == ["mcp.E103"]
    assert _ids(MODE="oauth", OAUTH_ISSUER=None) == ["mcp.E104"]
    assert _ids(MODE="oauth", OAUTH_ISSUER="https://as", OAUTH_ALGORITHMS=["RS256", "HS256", "none"]) == [
        "mcp.E105"]


@override_settings(DEBUG=False, ALLOWED_HOSTS=["mcp.example.com"])
def test_another_principal_resolver_is_not_open_and_excludes_mcp_auth() -> None:
    resolver = "mcp_django.users.django_user"
    mcp = {**settings.MCP, "PRINCIPAL_RESOLVER": resolver}
    with override_settings(MCP={**mcp, "ACCESS": {"MODE": "open"}}):
        assert [m.id for m in check_access()] == []
    with override_settings(MCP={**mcp, "ACCESS": {"MODE": "keys"}}):
        assert [m.id for m in check_access()] == ["mcp.E107"]
