"""Client profiles (``ClientProfile``): the logo and home page a client declares in its RFC 7591
registration or its Client ID Metadata Document, kept for the consent page. Only https URLs: the
consent page must not load ``javascript:`` or plain-http images chosen by a stranger."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from .models import ClientProfile


def _https(value: Any) -> str:
    if not isinstance(value, str) or len(value) > 500:
        return ""
    parts = urlsplit(value)
    return value if parts.scheme == "https" and parts.hostname else ""


def remember(client_id: str, metadata: dict[str, Any]) -> None:
    """Keep (or update) ``client_id``'s logo and home page from its ``metadata``."""
    ClientProfile.objects.update_or_create(
        client_id=client_id,
        defaults={
            "logo_uri": _https(metadata.get("logo_uri")),
            "client_uri": _https(metadata.get("client_uri")),
        },
    )


def profile(client_id: str) -> ClientProfile | None:
    return ClientProfile.objects.filter(client_id=client_id).first()
