"""Signed calls: an upstream can tell a call from this server from a forged one.

With ``Tool.http_signing_secret_env`` set, every request (each retry too) carries

- ``X-MCP-Timestamp``: the Unix time of the attempt, in seconds;
- ``X-MCP-Signature``: ``v1=`` + hex HMAC-SHA256, keyed with the secret, of
  ``<timestamp> "." <body bytes>`` (an empty body for GET and DELETE),

as webhook providers sign their deliveries (Stripe's ``t.payload``, GitHub's HMAC-SHA256 of the
body). The upstream recomputes it over the raw body it received, compares in constant time, and
rejects a timestamp older than a few minutes (a replay); ``v1`` leaves room for another scheme.
The signature covers the body and the time, not the URL: an upstream that acts on a GET's URL
alone should treat the signature as proof of origin and freshness only. The secret is read from
the environment at call time, under the same rule as the secret header (``secret_env``), and is
never logged nor stored. docs/guides/http-tools.md "Signed calls" has the
verification snippet.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-MCP-Signature"
TIMESTAMP_HEADER = "X-MCP-Timestamp"
SCHEME = "v1"


def signature(secret: bytes, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret, str(timestamp).encode("ascii") + b"." + body, hashlib.sha256).hexdigest()
    return f"{SCHEME}={digest}"


def headers(secret: bytes, timestamp: int, body: bytes | None) -> dict[str, str]:
    return {TIMESTAMP_HEADER: str(timestamp), SIGNATURE_HEADER: signature(secret, timestamp, body or b"")}
