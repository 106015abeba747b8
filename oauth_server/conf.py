"""The built-in authorization server's settings: ``MCP_OAUTH_SERVER`` (a dict the project sets
from the environment, docs/guides/oauth-server.md) merged over ``DEFAULTS``, and
the ``OAUTH2_PROVIDER`` setting django-oauth-toolkit reads, derived from them (``provider_settings``).

The server is on when ``MCP["ACCESS"]["OAUTH_ISSUER"]`` is ``"self"`` (``mcp_django.conf``
resolves it: ``OAUTH_SELF``); off, its endpoints answer 404 and nothing else changes. Importing
this module imports no model (the project's settings call ``provider_settings``).
"""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    # RFC 7591 dynamic registration: deprecated by the 2026-07-28 authorization spec in favour of
    # CIMD, but what most clients still do; on for compatibility (env MCP_OAUTH_DCR).
    "DCR": True,
    # Client ID Metadata Documents (the spec: authorization servers SHOULD support them).
    "CIMD": True,
    # Development only: fetch CIMD documents from loopback/private addresses. Still https only, the
    # certificate verified (SSL_CERT_FILE for a test CA): the CIMD draft and SEP-991 allow no http.
    "CIMD_ALLOW_PRIVATE": False,
    "ACCESS_TOKEN_SECONDS": 600,  # short: /mcp checks a JWT's signature, not a revocation list
    "REFRESH_TOKEN_SECONDS": 30 * 24 * 3600,
    "CODE_SECONDS": 60,  # RFC 6749 §4.1.2: a maximum lifetime of 10 minutes is RECOMMENDED
    "ALGORITHM": "ES256",
    # Signing keys from the environment (MCP_OAUTH_SIGNING_KEYS, PKCS#8 PEM blocks, the first
    # signs) instead of the database; empty: the database's, made and rotated by oauth_keys.
    "SIGNING_KEYS": "",
    # A new signing key is published this long before it signs, so every worker's JWKS holds it
    # first (an unknown kid makes a verifier refetch at most every OAUTH_JWKS_MIN_REFRESH).
    "KEY_PUBLISH_SECONDS": 30,
    # Per client address, "N/S" (docs/reference/settings.md): the endpoints a stranger can hammer.
    "TOKEN_RATE": "60/60",
    "REGISTRATION_RATE": "20/3600",
    # Failed sign-ins, "N/S", at /oauth/login/ and /admin/login/ (sign_in_limits.py): per account
    # (the username typed) and per client address; over either, 429 until the window ends.
    "SIGN_IN_RATE": "10/900",
    "SIGN_IN_ADDRESS_RATE": "50/900",
    # RFC 8693 token exchange (exchange.py): the client ids of the confidential clients that may
    # exchange a user's access token for one of an operator's ExchangeTarget; empty: none may,
    # and the grant is not advertised (least privilege: named clients only, no wildcard).
    "EXCHANGE_CLIENTS": [],
}

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"  # RFC 8693 §2.1


def exchange_clients(conf: dict[str, Any] | None = None) -> frozenset[str]:
    value = (conf or server_settings())["EXCHANGE_CLIENTS"] or []
    names = value.split(",") if isinstance(value, str) else value
    return frozenset(n.strip() for n in names if str(n).strip())


def server_settings() -> dict[str, Any]:
    from django.conf import settings

    return {**DEFAULTS, **(getattr(settings, "MCP_OAUTH_SERVER", None) or {})}


class ProviderSettings(dict[str, Any]):
    """The toolkit reads ``OIDC_ISS_ENDPOINT`` (the metadata's ``issuer`` and the RFC 9207 ``iss``)
    the first time it needs it, after the settings are loaded: it is ``MCP["ACCESS"]``'s resolved
    issuer (``RESOURCE_URL``'s origin with ``self``), named once, in ``mcp_django.conf``."""

    def __missing__(self, key: str) -> Any:
        if key != "OIDC_ISS_ENDPOINT":
            raise KeyError(key)
        from mcp_django.conf import access_settings

        return str(access_settings()["OAUTH_ISSUER"] or "")


def provider_settings(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """``OAUTH2_PROVIDER``: authorization code + PKCE S256 and refresh only, every RFC 9700 gate
    on, our validator, token generator and scopes; ``overrides``: ``MCP_OAUTH_SERVER``'s values."""
    conf = {**DEFAULTS, **(overrides or {})}
    return ProviderSettings(
        {
            "OAUTH2_SERVER_CLASS": "oauth_server.server.AuthorizationCodeServer",
            "OAUTH2_VALIDATOR_CLASS": "oauth_server.validator.MCPValidator",
            "ACCESS_TOKEN_GENERATOR": "oauth_server.tokens.access_token",
            # Opaque and random: oauthlib would otherwise sign refresh tokens with the access token's
            # generator, and a refresh token must never pass for an access token on /mcp.
            "REFRESH_TOKEN_GENERATOR": "oauthlib.oauth2.rfc6749.tokens.random_token_generator",
            "SCOPES_BACKEND_CLASS": "oauth_server.scopes.MCPScopes",
            "SCOPES": {"mcp": "MCP"},  # mandatory for the toolkit; MCPScopes answers from MCP_OAUTH_SCOPES
            "DEFAULT_SCOPES": ["__all__"],
            "PKCE_REQUIRED": True,
            "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
            "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
            "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
            "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
            "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
            "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,  # only digests of tokens at rest
            "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
            "COMPLIANT_BCP_RFC9700_REDIRECT_URI_SCHEME": True,
            "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
            "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
            "ROTATE_REFRESH_TOKEN": True,
            "REFRESH_TOKEN_REUSE_PROTECTION": True,  # a rotated token used again ends its family
            "ACCESS_TOKEN_EXPIRE_SECONDS": int(conf["ACCESS_TOKEN_SECONDS"]),
            "REFRESH_TOKEN_EXPIRE_SECONDS": int(conf["REFRESH_TOKEN_SECONDS"]),
            "AUTHORIZATION_CODE_EXPIRE_SECONDS": int(conf["CODE_SECONDS"]),
            "REQUEST_APPROVAL_PROMPT": "force",
            # RFC 8252 §7.3: loopback redirects match any port; "localhost" too, as MCP clients use it.
            "ALLOW_LOCALHOST_LOOPBACK": True,
            "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
            # RFC 8414 §2 grant_types_supported: token exchange only where a client may use it.
            "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token",
                                             *([TOKEN_EXCHANGE] if exchange_clients(conf) else [])],
            "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
                "none",
                "client_secret_basic",
                "client_secret_post",
            ],
            "DCR_ENABLED": bool(conf["DCR"]),
            "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
            "CIMD_ENABLED": bool(conf["CIMD"]),
            "CIMD_METADATA_FETCHER": "oauth_server.cimd.MetadataFetcher",
        }
    )
