"""Signing keys: the one that signs (``signer``), the JWKS that publishes them (``jwks``,
``jwks_document``: the resource server's in-process fetch, ``MCP["ACCESS"]["OAUTH_JWKS_SOURCE"]``),
and rotation (``rotate``, the ``oauth_keys`` command).

Rotation without a refused token: a new key is published at once but signs only after
``KEY_PUBLISH_SECONDS``, by when every worker's verifier has it (an unknown ``kid`` makes it
refetch); the old key stays published, retired, until the last token it signed has expired.
Key material is never logged: errors name the ``kid`` only.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import secrets
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from django.db import close_old_connections, transaction
from django.utils import timezone

from .conf import server_settings
from .models import SigningKey, record

CACHE_SECONDS = 5.0  # how stale this process's view of the key table may be


def generate(algorithm: str) -> str:
    """A new private key for ``algorithm``, as PKCS#8 PEM."""
    if algorithm == "ES256":
        key: Any = ec.generate_private_key(ec.SECP256R1())
    elif algorithm in ("RS256", "PS256"):
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    else:
        raise ValueError(f"no key generator for {algorithm!r} (ES256, RS256, PS256)")
    pem: bytes = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return pem.decode()


def rotate(algorithm: str | None = None) -> SigningKey:
    """A new key (it signs after ``KEY_PUBLISH_SECONDS``); the others retire once the tokens they
    signed have expired."""
    if server_settings().get("SIGNING_KEYS"):
        raise ValueError("the signing keys come from MCP_OAUTH_SIGNING_KEYS: rotate there (a new key first)")
    algorithm = algorithm or str(server_settings()["ALGORITHM"])
    lifetime = int(server_settings()["ACCESS_TOKEN_SECONDS"]) + int(server_settings()["KEY_PUBLISH_SECONDS"])
    with transaction.atomic():
        key = SigningKey.objects.create(
            kid=secrets.token_urlsafe(12), algorithm=algorithm, private_key=generate(algorithm)
        )
        SigningKey.objects.filter(retired_at__isnull=True).exclude(pk=key.pk).update(
            retired_at=timezone.now() + timedelta(seconds=lifetime)
        )
    record("key_rotated", detail=f"new key {key.kid} ({algorithm})")
    _cache.clear()
    return key


class _Keys:
    """This process's copy of the key table, re-read every ``CACHE_SECONDS``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read_at = -1e18
        self._keys: list[SigningKey] = []
        self._private: dict[str, Any] = {}

    def clear(self) -> None:
        self._read_at = -1e18

    def published(self) -> list[SigningKey]:
        configured = server_settings().get("SIGNING_KEYS")
        if configured:
            return list(_parsed(configured)) if isinstance(configured, str) else from_settings(configured)
        with self._lock:
            if time.monotonic() - self._read_at > CACHE_SECONDS:
                now = timezone.now()
                self._keys = [
                    k for k in SigningKey.objects.all() if k.retired_at is None or k.retired_at > now
                ]
                self._read_at = time.monotonic()
            return list(self._keys)

    def ensured(self) -> list[SigningKey]:
        """The published keys; the first one ever made on demand (no step to forget at deploy)."""
        keys = self.published()
        if not keys:
            rotate()
            keys = self.published()
        return keys

    def signer(self) -> tuple[SigningKey, Any]:
        keys = self.ensured()
        delay = timedelta(seconds=int(server_settings()["KEY_PUBLISH_SECONDS"]))
        now = timezone.now()
        # Newest first: the newest key published long enough, else (only new keys) the oldest.
        ready = [k for k in keys if k.created_at <= now - delay]
        key = ready[0] if ready else keys[-1]
        private = self._private.get(key.kid)
        if private is None:
            private = self._private[key.kid] = serialization.load_pem_private_key(
                key.private_key.encode(), password=None
            )
        return key, private


_cache = _Keys()

PEM_END = "-----END PRIVATE KEY-----"


@functools.lru_cache(maxsize=4)
def _parsed(pems: str) -> tuple[SigningKey, ...]:
    return tuple(from_settings(pems))


def from_settings(pems: str | list[str]) -> list[SigningKey]:
    """Keys given by the environment (``MCP_OAUTH_SIGNING_KEYS``: PKCS#8 PEM blocks, the first
    signs, all are published; rotate by putting a new key first, and drop the old one once the
    tokens it signed have expired), as unsaved ``SigningKey`` rows, newest first. The ``kid`` is
    derived from the public key, so every worker names a key alike."""
    blocks = pems if isinstance(pems, list) else [b + PEM_END for b in pems.split(PEM_END) if b.strip()]
    keys = []
    for index, block in enumerate(blocks):
        private: Any = serialization.load_pem_private_key(block.strip().encode(), password=None)
        if isinstance(private, ec.EllipticCurvePrivateKey):
            algorithm = "ES256"
        elif isinstance(private, rsa.RSAPrivateKey):
            algorithm = "RS256"
        else:
            raise ValueError("MCP_OAUTH_SIGNING_KEYS: only EC P-256 and RSA keys")
        public = private.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        kid = base64.urlsafe_b64encode(hashlib.sha256(public).digest()[:12]).decode()
        created = datetime(2000, 1, 1, tzinfo=UTC) - timedelta(days=index)  # the first is the newest
        keys.append(SigningKey(kid=kid, algorithm=algorithm, private_key=block.strip(), created_at=created))
    return keys


def sign(claims: dict[str, Any]) -> str:
    key, private = _cache.signer()
    # RFC 9068 §2.1: an access token's typ is at+jwt, so no other JWT of ours passes for one.
    return jwt.encode(claims, private, algorithm=key.algorithm, headers={"kid": key.kid, "typ": "at+jwt"})


def jwks() -> dict[str, Any]:
    """The published public keys (RFC 7517), each pinned to its algorithm (RFC 8725 §3.1)."""
    found = []
    for key in _cache.ensured():
        public = serialization.load_pem_private_key(key.private_key.encode(), password=None).public_key()
        jwk = json.loads(jwt.algorithms.get_default_algorithms()[key.algorithm].to_jwk(public))
        found.append({**jwk, "kid": key.kid, "alg": key.algorithm, "use": "sig"})
    return {"keys": found}


def jwks_document(url: str, timeout: float) -> bytes:
    """``mcp_protocol.auth.oauth.Fetch`` for the built-in server: the JWKS read from the database
    in this process (the verifier calls it in a thread), not over HTTP from ourselves."""
    close_old_connections()
    try:
        return json.dumps(jwks()).encode()
    finally:
        close_old_connections()


def published() -> list[SigningKey]:
    """Every key in the JWKS (settings' or the database's, retiring ones too), newest first."""
    return _cache.published()


def verification_key(kid: str) -> tuple[str, Any] | None:
    """(algorithm, public key) of the published key ``kid``, or None: what this server checks its
    own tokens with when one comes back to it (a token exchange's subject token, ``exchange.py``)."""
    for key in _cache.published():
        if key.kid == kid:
            private: Any = serialization.load_pem_private_key(key.private_key.encode(), password=None)
            return key.algorithm, private.public_key()
    return None
