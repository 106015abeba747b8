"""Which user a principal acts for (connections/credentials.py) and which clients can be sent a
URL elicitation (registry/kinds/http_client/acting.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import override_settings

from access.models import ApiKey
from connections.credentials import user_of
from registry.kinds.http_client.acting import supports_url_mode

SELF = {"ACCESS": {"OAUTH_ISSUER": "self", "RESOURCE_URL": "https://mcp.example/mcp"}}


@pytest.mark.django_db
def test_an_api_key_acts_for_its_owner_and_a_key_without_one_for_nobody() -> None:
    cache.clear()
    owner = User.objects.create_user("alice")
    owned = ApiKey.objects.create(name="a", prefix="p1", digest="d1", owner=owner)
    orphan = ApiKey.objects.create(name="b", prefix="p2", digest="d2")
    assert user_of(f"key:{owned.pk}") == owner.pk
    assert user_of(f"key:{orphan.pk}") is None


def test_a_token_of_our_own_issuer_names_the_user_others_do_not() -> None:
    with override_settings(MCP=SELF):
        assert user_of("oauth:https://mcp.example 42") == 42
        assert user_of("oauth:https://elsewhere.example 42") is None
        assert user_of("oauth:https://mcp.example not-a-number") is None
    assert user_of("oauth:https://mcp.example 42") is None  # no built-in authorization server
    assert user_of(None) is None and user_of("") is None


@pytest.mark.parametrize(("capabilities", "url"), [
    ({}, False),
    ({"elicitation": {}}, False),  # 2025-11-25: an empty object is form mode only
    ({"elicitation": {"form": {}}}, False),
    ({"elicitation": {"url": {}}}, True),
    ({"elicitation": {"form": {}, "url": {}}}, True),
])
def test_only_a_client_declaring_url_mode_is_sent_one(capabilities: dict[str, object], url: bool) -> None:
    assert supports_url_mode(capabilities) is url


@pytest.mark.django_db
def test_a_tool_calling_as_the_user_keeps_authorization_for_the_users_token() -> None:
    from django.core.exceptions import ValidationError

    from registry.models import Tool

    tool = Tool(name="t", kind="http", http_method="GET", http_url="https://api.example.com/me",
                http_connection="tp", http_secret_header="Authorization", http_secret_env="MCP_TOOL_SECRET_X")
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["api.example.com"]):
        with pytest.raises(ValidationError) as refused:
            tool.full_clean()
        assert "http_secret_header" in refused.value.message_dict
        tool.http_secret_header = "X-Api-Key"
        tool.full_clean()


@pytest.mark.django_db(transaction=True)
async def test_a_step_up_is_asked_only_within_the_operators_scopes_and_for_a_grant_that_lacks_them() -> None:
    """connections.credentials.step_up: a service's insufficient_scope becomes a new connect only
    when the provider's scopes (the operator's bound) hold every scope asked for and the stored
    grant lacks one (else a loop of consent); otherwise CannotActAsUser says why."""
    from asgiref.sync import sync_to_async

    from connections.credentials import step_up
    from connections.models import ConnectedToken, Provider
    from registry.kinds.http_client.acting import CannotActAsUser, ConnectionNeeded

    def rows() -> str:
        owner = User.objects.create_user("alice")
        key = ApiKey.objects.create(name="a", prefix="p1", digest="d1", owner=owner)
        provider = Provider.objects.create(slug="tp", name="Third Party", authorization_url="https://tp.example/a",
                                           token_url="https://tp.example/t", scopes="profile write",
                                           client_id="c")
        ConnectedToken.objects.create(user=owner, provider=provider, sealed=b"sealed", scope="profile")
        return f"key:{key.pk}"

    cache.clear()
    with override_settings(MCP=SELF, REGISTRY_HTTP_ALLOWED_HOSTS=["tp.example"]):
        principal = await sync_to_async(rows)()
        with pytest.raises(ConnectionNeeded) as needed:
            await step_up(principal, "tp", "write", "e1")
        assert "/connect/tp/?ref=" in needed.value.url, "within the bound, lacking in the grant"
        with pytest.raises(CannotActAsUser, match="'admin' is not among them"):
            await step_up(principal, "tp", "write admin", "e2")
        with pytest.raises(CannotActAsUser, match="was granted 'profile' already"):
            await step_up(principal, "tp", "profile", "e3")
        with pytest.raises(CannotActAsUser, match="named no scope"):
            await step_up(principal, "tp", "", "e4")
        with pytest.raises(CannotActAsUser, match="no connect page"):
            await step_up(principal, "other", "write", "e5")
