"""Host and Origin allow-lists (security.py): DNS-rebinding protection."""

from __future__ import annotations

import pytest

from mcp_protocol.transports.responses import HTTPError
from mcp_protocol.transports.security import OriginGuard


def status(guard: OriginGuard, host: str, origin: str | None, local: str | None) -> int:
    try:
        guard.check(host, origin, local)
    except HTTPError as exc:
        return exc.status
    return 200


@pytest.mark.parametrize(
    ("host", "origin", "expected"),
    [
        ("127.0.0.1:8000", None, 200),
        ("localhost:8000", "http://localhost:8000", 200),
        ("[::1]:8000", None, 200),
        ("127.0.0.1:8000", "http://localhost:5173", 200),  # a local dev UI
        ("evil.example.com", "http://evil.example.com", 421),  # rebinding: foreign Host
        ("evil.example.com:8000", None, 421),
        ("127.0.0.1:8000", "http://evil.example.com", 403),
        ("127.0.0.1:8000", "null", 403),
        ("", None, 421),
    ],
)
def test_loopback_server_allows_only_loopback_hosts_and_origins_by_default(
    host: str, origin: str | None, expected: int
) -> None:
    assert status(OriginGuard([], [], ["127.0.0.1"]), host, origin, "127.0.0.1") == expected


def test_configured_lists_are_used_when_set() -> None:
    guard = OriginGuard(["mcp.example.com", ".example.org"], ["https://app.example.com"], [])
    assert status(guard, "mcp.example.com", "https://app.example.com", "10.0.0.5") == 200
    assert status(guard, "api.example.org:443", None, "10.0.0.5") == 200
    assert status(guard, "mcp.example.com", "https://mcp.example.com", "10.0.0.5") == 200  # same origin
    assert status(guard, "other.example.net", None, "10.0.0.5") == 421
    assert status(guard, "mcp.example.com", "https://evil.example.net", "10.0.0.5") == 403


def test_non_loopback_server_falls_back_to_django_allowed_hosts() -> None:
    guard = OriginGuard([], [], ["mcp.example.com"])
    assert status(guard, "mcp.example.com", None, "10.0.0.5") == 200
    assert status(guard, "127.0.0.1:8000", None, "10.0.0.5") == 421


def test_wildcards_allow_everything() -> None:
    guard = OriginGuard(["*"], ["*"], [])
    assert status(guard, "anything.example", "http://elsewhere.example", "10.0.0.5") == 200


HOSTS = ["example.com", "EXAMPLE.com:80", "example.com.", "a.b.example.com:8443", "[::1]:8000",
         "[::ffff:127.0.0.1]", "127.0.0.1", "exa mple.com", "example.com:port", "[::1", "", "ex_ample.com"]
PATTERNS = [[], ["*"], ["example.com"], [".example.com"], ["EXAMPLE.COM"], ["[::1]"], [""],
            ["other.org", ".b.example.com"]]


@pytest.mark.parametrize("host", HOSTS)
def test_the_core_matches_hosts_exactly_as_django_does(host: str) -> None:
    """The core's own host check (no Django in ``mcp_protocol``) gives Django's answers."""
    from django.http import request as django_request

    from mcp_protocol.transports import security

    assert security.split_domain_port(host) == django_request.split_domain_port(host)
    domain = security.split_domain_port(host)[0]
    for patterns in PATTERNS:
        assert security.validate_host(domain, patterns) == django_request.validate_host(domain, patterns)
