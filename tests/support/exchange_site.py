"""A server whose built-in authorization server exchanges tokens (RFC 8693, issue 42 item 4) and
an upstream API that trusts it (``jwt_api.py``), both real processes on loopback, for the token
exchange tests (tests/integration/test_token_exchange.py, tests/security/test_token_exchange.py).

The server is also its own exchanging client: the provider ``ours`` (``kind=token_exchange``)
points at its own token endpoint as the confidential client ``EXCHANGER``, for the API's
registered resource; the http tool ``whoami_api`` calls the API through it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

import httpx

from tests.support import LiveServer
from tests.support.jwt_api import JwtApi
from tests.support.live_server import REGISTRY_PROVIDER
from tests.support.oauth_flow import OAuthFlow, self_issuing_env
from tests.support.ports import free_port

GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS = "urn:ietf:params:oauth:token-type:access_token"
EXCHANGER, EXCHANGER_SECRET = "mcpsite-exchanger", "exchanger-secret-1"
OTHER, OTHER_SECRET = "other-confidential", "other-secret-1"  # confidential, not allowed to exchange
PEOPLE = {name: f"{name}-password-1" for name in ("alice", "bob", "carol")}
STAFF, STAFF_PASSWORD = "root", "root-password-1"

ROWS = """
from django.contrib.auth.models import User
from oauth2_provider.models import get_application_model
for name, password in {people!r}.items():
    User.objects.create_user(name, password=password)
User.objects.create_superuser({staff!r}, password={staff_password!r})
App = get_application_model()
for client_id, secret in (({exchanger!r}, {exchanger_secret!r}), ({other!r}, {other_secret!r})):
    App.objects.create(name=client_id, client_id=client_id, client_secret=secret, client_type="confidential",
                       authorization_grant_type="client-credentials")
from oauth_server.models import ExchangeTarget
ExchangeTarget.objects.create(name="api", resource={api!r}, scopes="mcp extra")
from connections.models import Provider
Provider.objects.create(slug="ours", name="Our API", kind="token_exchange", token_url="{base}/oauth/token/",
    resource={api!r}, client_id={exchanger!r}, client_secret_env="MCP_TOOL_SECRET_EXCHANGER")
from registry.models import Tool
Tool.objects.create(name="whoami_api", kind="http", http_method="GET", http_url="{api}me",
    http_connection="ours", task_support="forbidden")
"""


def start(extra_env: Mapping[str, str] | None = None) -> tuple[LiveServer, JwtApi]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    api = JwtApi(f"{base}/.well-known/jwks.json", base).start()
    env = {
        **self_issuing_env(port, {"mcp": {}, "extra": {}}, auth="keys,oauth"),
        "MCP_OAUTH_EXCHANGE_CLIENTS": EXCHANGER,
        "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1",
        "MCP_TOOL_SECRET_EXCHANGER": EXCHANGER_SECRET,
        **(extra_env or {}),
    }
    rows = ROWS.format(people=PEOPLE, staff=STAFF, staff_password=STAFF_PASSWORD, exchanger=EXCHANGER,
                       exchanger_secret=EXCHANGER_SECRET, other=OTHER, other_secret=OTHER_SECRET,
                       api=api.resource, base=base)
    try:
        server = LiveServer(env=env, port=port, provider=REGISTRY_PROVIDER,
                            load=[["shell", "-c", rows]]).start()
    except Exception:
        api.stop()
        raise
    return server, api


def user_token(live: LiveServer, name: str, scope: str = "mcp") -> dict[str, Any]:
    """A real access token of ``name`` for ``/mcp`` (sign-in, consent, code exchange)."""
    flow = OAuthFlow(live.base_url, name, PEOPLE[name])
    try:
        return flow.access_token(scope=scope)
    finally:
        flow.close()


def claims(token: str) -> dict[str, Any]:
    """A JWT's claims, unverified (the API and the server verify; a test only reads them)."""
    payload = token.split(".")[1]
    found: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return found


def exchange(live: LiveServer, subject: str, *, client: tuple[str, str] = (EXCHANGER, EXCHANGER_SECRET),
             **form: str) -> httpx.Response:
    """A token exchange request at ``live``'s token endpoint, the client authenticated with HTTP
    Basic (RFC 6749 §2.3.1); ``form`` adds or overrides parameters."""
    body = {"grant_type": GRANT, "subject_token": subject, "subject_token_type": ACCESS, **form}
    return httpx.post(f"{live.base_url}/oauth/token/", data=body, auth=client, timeout=10.0)
