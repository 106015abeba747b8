"""The provider's URLs under the project's outbound rules (``mcp_django.outbound``), bound to the
http kind's settings, as an http tool's are: the host must be in ``REGISTRY_HTTP_ALLOWED_HOSTS``,
and with ``REGISTRY_HTTP_FORBID_PRIVATE`` on its addresses must be public (checked on the address
connected to). Plain ``http`` is accepted only while private addresses are allowed (a loopback
provider in development and tests); otherwise https only.

``post_form``: one form POST (the token, refresh and revocation requests, RFC 6749 §4.1.3, §6,
RFC 7009 §2.1), never redirected, its answer capped and timed.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode, urlsplit

from mcp_django.conf import access_settings
from mcp_django.outbound import fetch as outbound
from mcp_django.outbound.rules import Policy
from mcp_django.outbound.rules import url_problem as rules_problem
from registry.kinds.http_client import config, guard

TIMEOUT = 10.0  # s: a token endpoint that takes longer fails the connect or the refresh
MAX_BYTES = 64 * 1024  # a token response is small

Refused = outbound.OutboundRefused
Failed = outbound.OutboundFailed


def policy() -> Policy:
    forbid = guard.forbid_private()
    return Policy(schemes=("https",) if forbid else ("https", "http"),
                  allowed_hosts=tuple(config.allowed_hosts()), forbid_private=forbid,
                  max_bytes=MAX_BYTES, timeout=TIMEOUT, max_redirects=0)


def url_problem(url: str) -> str | None:
    """Why a provider may not use ``url`` (None: it may, subject to the address it resolves to)."""
    problem = rules_problem(url, policy())
    if problem and "not an allowed host" in problem:
        return f"{problem} (REGISTRY_HTTP_ALLOWED_HOSTS)"
    return problem


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


def issuer_problem(token_url: str) -> str | None:
    """Why a token exchange provider may not send callers' tokens to ``token_url``: only to the
    authorization server that issued them (``MCP_OAUTH_ISSUER``'s origin), which knows them
    already. Anywhere else they would be replayable on ``/mcp`` (MCP authorization, "Token
    Passthrough": a server MUST NOT pass the client's token on)."""
    issuer = str(access_settings()["OAUTH_ISSUER"] or "")
    if not issuer:
        return "this server verifies no OAuth tokens (MCP_OAUTH_ISSUER): callers have none to exchange"
    if _origin(token_url) != _origin(issuer):
        return f"a token exchange's token URL must be at the issuer of the callers' tokens ({issuer})"
    return None


def post_form(url: str, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """POST ``form`` to ``url``; (status, the JSON object answered, or {} when it is not one)."""
    fetched = outbound.request(
        "POST", url, policy(),
        {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
        urlencode(form).encode("ascii"),
    )
    try:
        answer = json.loads(fetched.body or b"{}")
    except ValueError:
        answer = {}
    return fetched.status, answer if isinstance(answer, dict) else {}
