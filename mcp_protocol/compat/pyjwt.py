"""PyJWT internals the OAuth resource server relies on (2.x).

``PyJWK`` keeps the JWK it was built from as ``_jwk_data``; its public ``algorithm_name`` cannot
say whether the authorization server published an ``alg`` (RFC 7517 §4.4), because it defaults a
missing one from the key type, and a key without ``alg`` may sign any algorithm of its type
(``auth/oauth.py``).
"""

from __future__ import annotations

from typing import Any


def published_alg(jwk: Any) -> str | None:
    """The ``alg`` member of the JWK as published, or None when it has none."""
    data = getattr(jwk, "_jwk_data", None)
    alg = data.get("alg") if isinstance(data, dict) else None
    return alg if isinstance(alg, str) else None
