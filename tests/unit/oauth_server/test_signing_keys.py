"""Signing keys from the environment (``MCP_OAUTH_SIGNING_KEYS``, oauth_server/keys.py): the
first signs, all are published with a kid derived from the public key, nothing is written to the
database, and ``rotate`` refuses (rotation happens in the environment)."""

from __future__ import annotations

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from django.test import override_settings

from oauth_server import keys


def pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def test_the_first_key_signs_and_every_key_is_published() -> None:
    newest = ec.generate_private_key(ec.SECP256R1())
    older = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with override_settings(MCP_OAUTH_SERVER={"SIGNING_KEYS": pem(newest) + "\n" + pem(older)}):
        published = keys.jwks()["keys"]
        assert [k["alg"] for k in published] == ["ES256", "RS256"]
        assert all("d" not in k for k in published)  # public halves only
        token = keys.sign({"sub": "1"})
        assert jwt.get_unverified_header(token)["kid"] == published[0]["kid"]
        assert jwt.decode(token, newest.public_key(), algorithms=["ES256"])["sub"] == "1"
        assert keys.published()[0].pk is None  # nothing in the database
        with pytest.raises(ValueError, match="MCP_OAUTH_SIGNING_KEYS"):
            keys.rotate()
