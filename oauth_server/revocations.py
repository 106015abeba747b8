"""Revoked grants for ``/mcp`` (``mcp_protocol/auth/revocations.py``): an access token is a JWT
checked without the database, so revoking its grant writes a watermark (``revoke``) that every
worker re-reads each second (``watermarks``, ``MCP["ACCESS"]["OAUTH_REVOCATIONS_SOURCE"]``) and
checks with one dict lookup. Watermarks older than the longest access token's life are dropped."""

from __future__ import annotations

import json
import time
from typing import Any

from django.db import close_old_connections
from django.db.models import Max

from .conf import server_settings
from .models import Revocation

LEEWAY = 60  # the resource server's exp leeway (30 s) and clock skew, with room to spare


def revoke(user: Any, client_id: str) -> None:
    """From now on, refuse on ``/mcp`` every access token ``client_id`` holds for ``user``."""
    subject = str(getattr(user, "pk", user))
    if subject and subject != "None" and client_id:
        Revocation.objects.filter(before__lt=_horizon()).delete()  # here, not in the readers' poll
        Revocation.objects.create(subject=subject, client_id=client_id, before=time.time())


def _horizon() -> float:
    return time.time() - int(server_settings()["ACCESS_TOKEN_SECONDS"]) - LEEWAY


def watermarks() -> bytes:
    """``[[subject, client_id, before], ...]`` of the grants revoked within a token's lifetime."""
    close_old_connections()
    try:
        rows = (
            Revocation.objects.filter(before__gte=_horizon())
            .values("subject", "client_id")
            .annotate(last=Max("before"))
        )
        return json.dumps([[r["subject"], r["client_id"], r["last"]] for r in rows]).encode()
    finally:
        close_old_connections()
