"""Fetching Client ID Metadata Documents through the project's one outbound fetcher
(``mcp_django.outbound.fetch``): https only, as the CIMD draft (§3, "MUST use the https scheme")
and SEP-991 say, every resolved address public, no redirect, one deadline
(``CIMD_FETCH_TIMEOUT_SECONDS``), a size cap (``CIMD_MAX_DOCUMENT_SIZE``). ``CIMD_ALLOW_PRIVATE``
(development only) lets a document on loopback or a private network in: still https, its
certificate still verified (a test CA comes through ``SSL_CERT_FILE``), the same caps. The
toolkit checks the URL's form first (``mcp_django.compat.oauth2_provider``) and reads the document as its
own fetcher does; a document whose ``client_id`` equals its URL is remembered (``profiles``)."""

from __future__ import annotations

import json
from typing import Any

from oauth2_provider.cimd import CIMDError
from oauth2_provider.settings import oauth2_settings

from mcp_django.compat.oauth2_provider import effective_max_age, validate_client_id_url
from mcp_django.outbound.fetch import OutboundFailed, OutboundRefused, fetch
from mcp_django.outbound.rules import Policy

from .conf import server_settings
from .profiles import remember


def policy() -> Policy:
    return Policy(
        schemes=("https",),
        forbid_private=not server_settings()["CIMD_ALLOW_PRIVATE"],
        max_bytes=int(oauth2_settings.CIMD_MAX_DOCUMENT_SIZE),
        timeout=float(oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS),
        max_redirects=0,
    )


class MetadataFetcher:
    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        metadata, max_age = self._fetch(client_id)
        if metadata.get("client_id") == client_id:  # a document that is not its URL's keeps nothing
            remember(client_id, metadata)
        return metadata, max_age

    def _fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        parsed = validate_client_id_url(client_id)
        try:
            answer = fetch(parsed.geturl(), policy(), {"Accept": "application/json, application/*+json"})
        except (OutboundRefused, OutboundFailed) as exc:
            raise CIMDError(f"could not fetch client_id document: {exc}") from None
        if answer.status != 200:
            raise CIMDError(f"client_id document returned HTTP {answer.status}")
        content_type = {k.lower(): v for k, v in answer.headers.items()}.get("content-type", "")
        media_type = content_type.split(";")[0].strip().lower()
        if media_type != "application/json" and not (
            media_type.startswith("application/") and media_type.endswith("+json")
        ):
            raise CIMDError(f"client_id document is not JSON (Content-Type: {media_type!r})")
        try:
            data = json.loads(answer.body)
        except ValueError as exc:
            raise CIMDError("client_id document is not valid JSON") from exc
        if not isinstance(data, dict):
            raise CIMDError("client_id document must be a JSON object")
        cache_control = {k.lower(): v for k, v in answer.headers.items()}.get("cache-control")
        return data, effective_max_age(cache_control)
