"""System checks of the built-in authorization server (oauth_server/checks.py)."""

from __future__ import annotations

from django.test import override_settings

from oauth_server.checks import check_oauth_server


def ids(access: dict[str, str], **extra: object) -> list[str]:
    with override_settings(MCP={"ACCESS": access}, **extra):
        return [m.id for m in check_oauth_server()]


def test_self_needs_a_mode_that_verifies_tokens_and_https_in_production() -> None:
    assert ids({"MODE": "keys", "OAUTH_ISSUER": "self"}, DEBUG=True) == ["oauth_server.E001"]
    plain = {"MODE": "oauth", "OAUTH_ISSUER": "self", "RESOURCE_URL": "http://mcp.example.com/mcp"}
    assert ids(plain, DEBUG=False) == ["oauth_server.W002"]
    https = {**plain, "RESOURCE_URL": "https://mcp.example.com/mcp"}
    assert ids(https, DEBUG=False) == []
    assert ids({"MODE": "oauth", "OAUTH_ISSUER": "https://idp.example"}, DEBUG=False) == []  # not ours
    allow = {"MCP_OAUTH_SERVER": {"CIMD_ALLOW_PRIVATE": True}}
    assert ids(https, DEBUG=False, **allow) == ["oauth_server.W001"]
