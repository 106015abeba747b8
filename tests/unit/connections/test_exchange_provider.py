"""A token exchange provider (connections/exchange.py, RFC 8693): what its row must name, and the
in-process cache of exchanged tokens (keyed per caller, bounded, never used near expiry). The whole
exchange against a real authorization server is tests/integration/test_token_exchange.py."""

from __future__ import annotations

import time

import pytest
from asgiref.sync import async_to_sync
from django.core.exceptions import ValidationError
from django.test import override_settings

from connections import exchange
from connections.models import Provider
from mcp_protocol.auth.principal import Principal, present, withdraw
from registry.kinds.http_client.acting import CannotActAsUser


def _provider(**fields: str) -> Provider:
    return Provider(slug="up", name="Upstream", token_url="https://as.example/oauth/token/",
                    client_id="c", **fields)


def test_an_exchange_provider_names_its_resource_and_a_secret_not_an_authorization_url() -> None:
    with pytest.raises(ValidationError) as refused:
        _provider(kind=Provider.Kind.TOKEN_EXCHANGE).clean()
    # (token_url is off this test's allow-list too: the outbound rules' message, not ours.)
    assert {"resource", "client_secret_env"} <= set(refused.value.message_dict)
    assert "authorization_url" not in refused.value.message_dict
    with pytest.raises(ValidationError) as code:
        _provider().clean()  # the authorization code kind still needs its authorization URL
    assert "authorization_url" in code.value.message_dict
    assert "resource" not in code.value.message_dict


SELF = {"ACCESS": {"OAUTH_ISSUER": "self", "RESOURCE_URL": "https://mcp.example/mcp"}}


def test_callers_tokens_go_only_to_a_token_url_at_their_issuer() -> None:
    # MCP authorization "Token Passthrough": elsewhere, a user's /mcp token could be replayed.
    def token_url_problem(url: str) -> str:
        provider = _provider(kind=Provider.Kind.TOKEN_EXCHANGE, resource="https://api.example/",
                             client_secret_env="MCP_TOOL_SECRET_X")
        provider.token_url = url
        try:
            provider.clean()
        except ValidationError as exc:
            return " ".join(exc.message_dict.get("token_url", []))
        return ""

    with override_settings(MCP=SELF):
        assert "at the issuer" in token_url_problem("https://as.example/oauth/token/")
        assert "at the issuer" in token_url_problem("http://mcp.example/oauth/token/")  # another origin
        assert "at the issuer" not in token_url_problem("https://mcp.example/oauth/token/")
    assert "verifies no OAuth tokens" in token_url_problem("https://mcp.example/oauth/token/")


def test_the_cache_keeps_a_token_until_shortly_before_it_expires() -> None:
    cache = exchange._Cache()
    soon, later = ("p", 1, "a"), ("p", 1, "b")
    cache.put(soon, "t-soon", time.time() + exchange.MARGIN - 1)  # inside the margin: not kept
    cache.put(later, "t-later", time.time() + 600)
    assert cache.get(soon) is None
    assert cache.get(later) == "t-later"
    assert cache.get(("other principal", 1, "b")) is None
    assert "t-later" not in repr(cache)


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exchange, "CACHE_MAX", 3)
    cache = exchange._Cache()
    for n in range(5):
        cache.put(("p", n, "d"), f"t{n}", time.time() + 600)
    assert len(cache._held) == 3
    assert cache.get(("p", 0, "d")) is None and cache.get(("p", 4, "d")) == "t4"  # the oldest went first


def test_a_caller_without_a_token_cannot_be_acted_for() -> None:
    info = {"id": 1, "name": "Upstream", "enabled": True, "kind": Provider.Kind.TOKEN_EXCHANGE}
    with pytest.raises(CannotActAsUser, match="came with none"):
        async_to_sync(exchange.token_for)("key:7", info)
    # Another principal's token is not lent: the context holds alice's, the call is bob's.
    held = present(Principal("oauth:https://as.example 1"), "alice-token")
    try:
        with pytest.raises(CannotActAsUser, match="came with none"):
            async_to_sync(exchange.token_for)("oauth:https://as.example 2", info)
    finally:
        withdraw(held)
