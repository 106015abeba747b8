"""Sealed ``requestState`` for input-required results (2026-07-28 basic/patterns/mrtr.mdx).

The state travels through the client, so the server MUST treat it as attacker-controlled and
protect its integrity ("Server Requirements" 4), and SHOULD bind it to the principal, a short
expiry and the originating request (5). ``RequestStateSealer.seal`` writes::

    base64url(JSON payload) "." key id "." base64url(HMAC-SHA256(key, "mcp-rs1." + payload))

and ``open`` checks, in this order, the shape, the key (any key of the ring: every worker holds
the same ring, and a key retired from signing keeps opening the states it signed until they
expire), the MAC (constant-time), the expiry, then the binding: principal, method, target (tool or
prompt name, resource URI) and a digest of the arguments. Each failure is an ``InvalidParams``
(-32602) saying which, so a client learns it must start the call over, never why a forged state
almost passed. The state is not encrypted: it carries only the client's own answers.

HMAC rather than AEAD: the standard library has it, and confidentiality from the client adds
nothing here. Keys come from settings (``MCP_REQUEST_STATE_KEYS``); this module is Django-free.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import InvalidParams

_DOMAIN = b"mcp-rs1."  # separates these MACs from any other use of the same key


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _key_id(key: bytes) -> str:
    return hashlib.sha256(b"mcp-rs-kid." + key).hexdigest()[:8]


def arguments_digest(arguments: Any) -> str:
    """A stable digest of the call's arguments (canonical JSON: sorted keys, no spaces)."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Binding:
    """What a state is only valid for: who asked, which method, on what, with which arguments."""

    principal: str | None
    method: str
    target: str
    arguments: str  # arguments_digest(...)

    def to_wire(self) -> dict[str, Any]:
        return {"p": self.principal, "m": self.method, "t": self.target, "a": self.arguments}


class RequestStateSealer:
    def __init__(
        self, keys: Sequence[bytes], ttl: float, clock: Callable[[], float] = time.time
    ) -> None:
        if not keys:
            raise ValueError("requestState needs at least one key")
        self._signing = keys[0]  # the first key signs; every key of the ring opens
        self._ring = {_key_id(key): key for key in keys}
        self.ttl = ttl
        self._clock = clock

    def _mac(self, key: bytes, payload: str) -> str:
        return _b64(hmac.new(key, _DOMAIN + payload.encode("ascii"), hashlib.sha256).digest())

    def seal(self, binding: Binding, data: dict[str, Any]) -> str:
        body = {**binding.to_wire(), "exp": int(self._clock() + self.ttl), "d": data}
        payload = _b64(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        kid = _key_id(self._signing)
        return f"{payload}.{kid}.{self._mac(self._signing, payload)}"

    def open(self, state: Any, binding: Binding) -> dict[str, Any]:
        """The data sealed in ``state``; raises ``InvalidParams`` unless it is intact, current and
        issued for ``binding``."""
        if not isinstance(state, str):
            raise InvalidParams("Invalid requestState: it must be the string the server returned")
        parts = state.split(".")
        if len(parts) != 3:
            raise InvalidParams("Invalid requestState: malformed")
        payload, kid, mac = parts
        key = self._ring.get(kid)
        if key is None:
            raise InvalidParams("Invalid requestState: signed with an unknown key; start the request over")
        if not hmac.compare_digest(mac, self._mac(key, payload)):
            raise InvalidParams("Invalid requestState: integrity check failed")
        try:
            body = json.loads(_unb64(payload))
        except (binascii.Error, ValueError, UnicodeDecodeError):
            raise InvalidParams("Invalid requestState: malformed") from None
        if not isinstance(body, dict) or not isinstance(body.get("d"), dict):
            raise InvalidParams("Invalid requestState: malformed")
        expires = body.get("exp")
        if not isinstance(expires, int) or self._clock() > expires:
            raise InvalidParams("Invalid requestState: expired; start the request over")
        wanted = binding.to_wire()
        for field, what in (("p", "principal"), ("m", "method"), ("t", "target"), ("a", "arguments")):
            if body.get(field) != wanted[field]:
                raise InvalidParams(f"Invalid requestState: it was issued for another {what}")
        data: dict[str, Any] = body["d"]
        return data
