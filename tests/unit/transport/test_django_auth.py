"""Django's own auth on /mcp (transports/django_auth.py): a logged-in session cookie or a management
API token makes the caller ``django-user:<pk>``; nothing, a bad credential or a logged-out session is 401;
the setting picks the resolver. In-process ASGI calls against the test database."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.utils import timezone

from management_api.tokens import ManagementToken
from mcp_protocol.routing import mcp_path
from mcp_protocol.transports import django_auth, runtime
from mcp_protocol.transports.django_auth import django_user, user_of
from mcp_protocol.transports.http import MCPEndpoint
from tests.support.asgi_call import post

pytestmark = pytest.mark.django_db(transaction=True)
MEMORY = {"BACKEND": "mcp_protocol.memory_provider.MemoryProvider", "OPTIONS": {}}


@pytest.fixture
async def endpoint() -> AsyncIterator[MCPEndpoint]:
    django_auth.forget_credentials()
    with override_settings(MCP={"PROVIDER": MEMORY}):
        try:
            yield MCPEndpoint(django_user)
        finally:
            await runtime.shutdown()
            django_auth.forget_credentials()


def _login() -> tuple[User, str]:
    user = User.objects.create_user("ada", password="pw-not-used")
    client = Client()
    client.force_login(user)
    return user, client.cookies[settings.SESSION_COOKIE_NAME].value


async def test_a_logged_in_session_cookie_is_the_django_user(endpoint: MCPEndpoint) -> None:
    user, session_key = await sync_to_async(_login)()
    cookie = f"other=1; {settings.SESSION_COOKIE_NAME}={session_key}"
    status, headers, _ = await post(endpoint, "/mcp", headers={"cookie": cookie})
    assert status == 200
    rt = await runtime.get_runtime()
    session = await rt.sessions.load(headers[b"mcp-session-id"].decode())
    assert session is not None and session.principal == f"django-user:{user.pk}"
    assert (await user_of(session.principal)).username == "ada"


async def _token_of(user: User) -> str:
    return (await sync_to_async(ManagementToken.issue)(user, "mcp"))[1]


async def test_a_management_token_is_the_same_principal_as_the_users_session(endpoint: MCPEndpoint) -> None:
    user = await User.objects.acreate(username="grace")
    token = await _token_of(user)
    status, headers, _ = await post(endpoint, "/mcp", headers={"authorization": f"Bearer {token}"})
    assert status == 200
    rt = await runtime.get_runtime()
    session = await rt.sessions.load(headers[b"mcp-session-id"].decode())
    assert session is not None and session.principal == f"django-user:{user.pk}"


@pytest.mark.parametrize("headers", [
    {}, {"authorization": "Bearer mcpm_not-a-token"}, {"authorization": "Bearer abc"},
    {"authorization": "Token abc"},  # DRF's token scheme: not accepted any more
    {"cookie": f"{settings.SESSION_COOKIE_NAME}=nosuchsession"},
])
async def test_no_or_a_bad_credential_is_401_with_a_challenge(
    endpoint: MCPEndpoint, headers: dict[str, str]
) -> None:
    status, response_headers, body = await post(endpoint, "/mcp", headers=headers)
    assert status == 401 and response_headers[b"www-authenticate"].startswith(b"Bearer")
    assert json.loads(body)["error"]["code"] == -32600


async def test_an_inactive_users_token_is_refused(endpoint: MCPEndpoint) -> None:
    token = await _token_of(await User.objects.acreate(username="gone", is_active=False))
    assert (await post(endpoint, "/mcp", headers={"authorization": f"Bearer {token}"}))[0] == 401


async def test_an_expired_management_token_is_refused(endpoint: MCPEndpoint) -> None:
    token = await _token_of(await User.objects.acreate(username="late"))
    await ManagementToken.objects.aupdate(expires_at=timezone.now() - timedelta(seconds=1))
    assert (await post(endpoint, "/mcp", headers={"authorization": f"Bearer {token}"}))[0] == 401


async def test_the_setting_chooses_the_resolver_of_a_default_route() -> None:
    app = mcp_path("mcp").callback
    resolver = "mcp_protocol.transports.django_auth.django_user"
    with override_settings(MCP={"PROVIDER": MEMORY, "PRINCIPAL_RESOLVER": resolver}):
        try:
            assert (await post(app, "/mcp"))[0] == 401
        finally:
            await runtime.shutdown()
    with override_settings(MCP={"PROVIDER": MEMORY}):
        try:
            assert (await post(app, "/mcp"))[0] == 200  # open mode by default
        finally:
            await runtime.shutdown()


def test_a_resolver_that_does_not_import_is_a_check_error() -> None:
    from mcp_protocol.checks import check_mcp_settings

    with override_settings(MCP={"PRINCIPAL_RESOLVER": "nowhere.resolver"}):
        assert [m.id for m in check_mcp_settings()] == ["mcp.E008"]


async def test_user_of_ignores_other_principals() -> None:
    assert await user_of(None) is None and await user_of("apikey:1") is None
    assert await user_of("django-user:not-a-number") is None
