"""Fetching Client ID Metadata Documents: the toolkit's SSRF-hardened fetcher (https only, every
resolved address public, no redirects, one deadline, a size cap; its resolver checks that the
document's ``client_id`` equals its URL and caches it per ``Cache-Control``), unless
``CIMD_ALLOW_PRIVATE`` (development only) lets a document on loopback or a private network in:
then the same bounds, without the address check (its certificate is still verified: a test CA
comes through ``SSL_CERT_FILE``)."""

from __future__ import annotations

import ssl
from typing import Any

import urllib3
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher
from oauth2_provider.settings import oauth2_settings

from mcp_django.compat.oauth2_provider import read_metadata_document, validate_client_id_url

from .conf import server_settings
from .profiles import remember


class MetadataFetcher(SafeMetadataFetcher):  # type: ignore[misc]
    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        metadata, max_age = self._fetch(client_id)
        if metadata.get("client_id") == client_id:  # a document that is not its URL's keeps nothing
            remember(client_id, metadata)
        return metadata, max_age

    def _fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        if not server_settings()["CIMD_ALLOW_PRIVATE"]:
            return super().fetch(client_id)  # type: ignore[no-any-return]
        parsed = validate_client_id_url(client_id)
        timeout = float(oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS)
        pool = urllib3.PoolManager(
            ssl_context=ssl.create_default_context(), retries=False, timeout=urllib3.Timeout(total=timeout)
        )
        try:
            response = pool.request(
                "GET",
                parsed.geturl(),
                redirect=False,
                preload_content=False,
                headers={"Accept": "application/json, application/*+json"},
            )
            try:
                return read_metadata_document(self, response)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            raise CIMDError(f"could not fetch client_id document: {exc}") from exc
        finally:
            pool.clear()
