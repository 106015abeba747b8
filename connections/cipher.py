"""The vault's encryption: ``cryptography``'s MultiFernet over the keys in the environment
variable ``CONNECTIONS_VAULT_KEYS`` (comma-separated Fernet keys: AES-128-CBC with HMAC-SHA256,
each ``Fernet.generate_key()``). The first key encrypts; every key decrypts. To rotate: put the new
key first and keep the old ones; every worker reads both, so no token becomes unreadable while the
workers restart one by one; ``manage.py rotate_vault_keys`` then re-encrypts every row with the
first key, after which the old key can go.

Read from the environment only (never from settings files or the database), when first needed,
and kept for the process. ``VaultLocked`` when the variable is missing or holds no valid key.
"""

from __future__ import annotations

import functools
import os

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

VARIABLE = "CONNECTIONS_VAULT_KEYS"


class VaultLocked(RuntimeError):
    pass


@functools.cache
def _cipher(keys: str) -> MultiFernet:
    try:
        return MultiFernet([Fernet(k.strip().encode("ascii")) for k in keys.split(",") if k.strip()])
    except (ValueError, TypeError):
        raise VaultLocked(f"{VARIABLE} must hold comma-separated Fernet keys "
                          "(Fernet.generate_key())") from None


def cipher() -> MultiFernet:
    keys = os.environ.get(VARIABLE, "")
    if not keys.strip():
        raise VaultLocked(f"the token vault needs {VARIABLE} (comma-separated Fernet keys) "
                          "in the environment")
    return _cipher(keys)


def seal(plain: bytes) -> bytes:
    return cipher().encrypt(plain)


def unseal(sealed: bytes) -> bytes:
    try:
        return cipher().decrypt(bytes(sealed))
    except InvalidToken:
        raise VaultLocked(f"a stored token cannot be decrypted with any key of {VARIABLE}") from None


def reseal(sealed: bytes) -> bytes:
    """``sealed`` encrypted again with the first key (rotation)."""
    return cipher().rotate(bytes(sealed))
