"""RFC 9700 §2.1 with RFC 8252 §7.3: a redirect URI over plain http only to the client's own
machine (oauth_server/validator.py)."""

from __future__ import annotations

import pytest

from oauth_server.validator import plain_http_allowed


@pytest.mark.parametrize(
    ("uri", "allowed"),
    [
        ("https://claude.ai/api/mcp/auth_callback", True),
        ("http://127.0.0.1:33418/callback", True),
        ("http://[::1]:8080/cb", True),
        ("http://localhost:6274/oauth/callback", True),
        ("http://example.com/callback", False),
        ("http://127.0.0.1.example.com/cb", False),
        ("http://10.0.0.5/cb", False),
    ],
)
def test_plain_http_redirects_only_to_loopback(uri: str, allowed: bool) -> None:
    assert plain_http_allowed(uri) is allowed
