"""Signed calls: an upstream can tell a call from this server from a forged one.

With ``Tool.http_signing_secret_env`` set, every request (each retry too) carries

- ``X-MCP-Timestamp``: the Unix time of the attempt, in seconds;
- ``X-MCP-Signature``: ``<scheme>=`` + hex HMAC-SHA256, keyed with the secret, of (by
  ``Tool.http_signing_scheme``)

  - ``v2`` (new tools): ``"v2" LF <timestamp> LF <METHOD> LF <URL> LF <hex SHA-256 of the body>``,
    the URL exactly as sent (scheme, host, port when given, path and query, percent-encoded as on
    the wire); the body digest of an empty body for GET and DELETE;
  - ``v1`` (rows made before v2; migration 0021 keeps them on it): ``<timestamp> "." <body bytes>``,

as webhook providers sign their deliveries (Stripe's ``t.payload``, GitHub's HMAC-SHA256 of the
body). v1 covers neither the method nor the URL: a captured signed GET could be replayed against
another path of the same upstream within the time window (issue 37 item 7); v2 binds both, as
request-signing schemes do (AWS SigV4's canonical request, HTTP Message Signatures RFC 9421's
``@method`` and ``@target-uri``). The upstream recomputes it over what it received, compares in
constant time, and rejects a timestamp older than a few minutes (a replay). The secret is read
from the environment at call time, under the same rule as the secret header (``secret_env``), and
is never logged nor stored. docs/guides/http-tools.md "Signed calls" has the verification snippet.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-MCP-Signature"
TIMESTAMP_HEADER = "X-MCP-Timestamp"
SCHEMES = ("v1", "v2")


def signed_bytes(scheme: str, timestamp: int, method: str, url: str, body: bytes) -> bytes:
    """What ``scheme`` signs for one request."""
    if scheme == "v1":
        return str(timestamp).encode("ascii") + b"." + body
    digest = hashlib.sha256(body).hexdigest()
    return "\n".join(("v2", str(timestamp), method.upper(), url, digest)).encode("utf-8")


def signature(secret: bytes, scheme: str, timestamp: int, method: str, url: str, body: bytes) -> str:
    mac = hmac.new(secret, signed_bytes(scheme, timestamp, method, url, body), hashlib.sha256).hexdigest()
    return f"{scheme}={mac}"


def headers(
    secret: bytes, scheme: str, timestamp: int, method: str, url: str, body: bytes | None
) -> dict[str, str]:
    return {TIMESTAMP_HEADER: str(timestamp),
            SIGNATURE_HEADER: signature(secret, scheme, timestamp, method, url, body or b"")}
