"""The built-in authorization server driven like a browser would, with ``httpx``: sign in through
the login form, consent on the consent page, take the code from the redirect. For the tests of
``oauth_server`` and the bench (a real access token from a real flow, no shortcut).

    flow = OAuthFlow(server.base_url, "alice", "secret")
    client = flow.register(["http://127.0.0.1:9/cb"])            # DCR (RFC 7591)
    pkce = PKCE.new()
    redirect = flow.authorize(client, pkce, "http://127.0.0.1:9/cb", scope="mcp")
    tokens = flow.exchange(client, redirect.code, pkce, "http://127.0.0.1:9/cb")
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx


def self_issuing_env(port: int, scopes: dict[str, Any] | None = None, auth: str = "oauth") -> dict[str, str]:
    """A test server that is its own authorization server on loopback ``port``: its scopes
    (``{"mcp": {}}`` unless given), and token and registration rates a test's many requests from
    one address stay under."""
    return {
        "MCP_AUTH": auth,
        "MCP_OAUTH_ISSUER": "self",
        "MCP_RESOURCE_URL": f"http://127.0.0.1:{port}/mcp",
        "MCP_OAUTH_SCOPES": json.dumps(scopes if scopes is not None else {"mcp": {}}),
        "MCP_OAUTH_TOKEN_RATE": "1000/60",
        "MCP_OAUTH_REGISTRATION_RATE": "1000/60",
    }


HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')
SCOPE_BOX = re.compile(r'<input type="checkbox" name="granted" value="([^"]+)"')


@dataclass(frozen=True)
class PKCE:
    verifier: str
    challenge: str

    @classmethod
    def new(cls) -> PKCE:
        verifier = secrets.token_urlsafe(48)
        digest = hashlib.sha256(verifier.encode()).digest()
        return cls(verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode())


@dataclass(frozen=True)
class Redirect:
    """Where the authorization endpoint sent the browser back to, and with what."""

    location: str
    params: dict[str, str]

    @property
    def code(self) -> str:
        return self.params["code"]


def user(manage_run: Any, username: str, password: str, *, staff: bool = False) -> None:
    """Create a Django user through ``manage_run`` (a ``LiveServer.manage``)."""
    manage_run(
        "shell",
        "-c",
        (
            "from django.contrib.auth.models import User; "
            f"User.objects.create_user({username!r}, password={password!r}, is_staff={staff!r})"
        ),
    )


class OAuthFlow:
    def __init__(self, base_url: str, username: str, password: str, *, resource: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.username, self.password = username, password
        self.resource = resource or f"{self.base_url}/mcp"
        self.browser = httpx.Client(base_url=self.base_url, timeout=10.0)

    def close(self) -> None:
        self.browser.close()

    def register(self, redirect_uris: list[str], **metadata: Any) -> str:
        body = {
            "client_name": "test client",
            "redirect_uris": redirect_uris,
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            **metadata,
        }
        response = httpx.post(f"{self.base_url}/oauth/register/", json=body, timeout=10.0)
        assert response.status_code == 201, response.text
        return str(response.json()["client_id"])

    def sign_in(self) -> None:
        page = self.browser.get("/oauth/login/")
        token = self.browser.cookies["csrftoken"]
        response = self.browser.post(
            "/oauth/login/",
            data={"username": self.username, "password": self.password, "csrfmiddlewaretoken": token},
        )
        assert response.status_code == 302, (page.status_code, response.text[:500])

    def authorize_url(
        self,
        client_id: str,
        pkce: PKCE | None,
        redirect_uri: str,
        *,
        scope: str = "mcp",
        state: str = "st-1",
        method: str | None = "S256",
        **extra: str,
    ) -> str:
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "scope": scope,
            "state": state,
            "resource": self.resource,
            **extra,
        }
        if pkce is not None:
            params["code_challenge"] = pkce.challenge if method != "plain" else pkce.verifier
            if method is not None:
                params["code_challenge_method"] = method
        return "/oauth/authorize/?" + urlencode(params)

    def consent_page(self, url: str) -> httpx.Response:
        """``url`` (the authorization endpoint, absolute or not) opened signed in."""
        if "sessionid" not in self.browser.cookies:
            self.sign_in()
        return self.browser.get(url)

    def authorize(
        self, client_id: str, pkce: PKCE | None, redirect_uri: str, *, allow: bool = True, **kwargs: Any
    ) -> Redirect:
        """Sign in if needed, open the consent page, allow (or deny); the redirect back."""
        page = self.consent_page(self.authorize_url(client_id, pkce, redirect_uri, **kwargs))
        if page.status_code == 302:
            return _redirect(page)
        return self.allow(page, allow=allow)

    def allow(self, page: httpx.Response, *, allow: bool = True, grant: list[str] | None = None) -> Redirect:
        """Submit the consent page ``page``: allow (or deny) ``grant`` (default: every scope
        asked for, the boxes left ticked); the redirect back."""
        assert page.status_code == 200, page.text[:1000]
        form = dict(HIDDEN.findall(page.text))
        assert form, page.text[:2000]
        if allow:
            form["allow"] = "Allow"
        fields: dict[str, Any] = {**form, "granted": SCOPE_BOX.findall(page.text) if grant is None else grant}
        response = self.browser.post(page.url.raw_path.decode(), data=fields)
        assert response.status_code == 302, response.text[:1000]
        return _redirect(response)

    def token(self, **form: str) -> httpx.Response:
        return httpx.post(f"{self.base_url}/oauth/token/", data=form, timeout=10.0)

    def code_grant(self, client_id: str, code: str, pkce: PKCE, redirect_uri: str) -> httpx.Response:
        """The token endpoint's answer to exchanging ``code``, whatever it is."""
        return self.token(
            grant_type="authorization_code",
            code=code,
            client_id=client_id,
            redirect_uri=redirect_uri,
            code_verifier=pkce.verifier,
            resource=self.resource,
        )

    def exchange(self, client_id: str, code: str, pkce: PKCE, redirect_uri: str) -> dict[str, Any]:
        response = self.code_grant(client_id, code, pkce, redirect_uri)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def access_token(self, redirect_uri: str = "http://127.0.0.1:9/cb", scope: str = "mcp") -> dict[str, Any]:
        """A whole flow: register, sign in, consent, exchange."""
        client = self.register([redirect_uri])
        pkce = PKCE.new()
        redirect = self.authorize(client, pkce, redirect_uri, scope=scope)
        return {**self.exchange(client, redirect.code, pkce, redirect_uri), "client_id": client}


def _redirect(response: httpx.Response) -> Redirect:
    location = response.headers["location"]
    query = parse_qs(urlsplit(location).query)
    return Redirect(location, {k: v[0] for k, v in query.items()})
