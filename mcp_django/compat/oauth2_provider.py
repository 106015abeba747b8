"""django-oauth-toolkit internals the authorization server relies on (3.4).

- ``OAuth2Validator._create_refresh_token(request, refresh_token_code, access_token,
  previous_refresh_token)`` is where a refresh token row is made (and, on rotation, given its
  predecessor's family); no signal or public hook sees the row. ``RefreshTokenHook`` overrides it
  once, here, and hands the row to ``refresh_token_created`` (``oauth_server/validator.py`` reads
  the token family there).
- ``oauth2_provider.cimd``'s ``_validate_client_id_url`` (the CIMD spec's URL rules) and
  ``_effective_max_age`` (how long a document may be cached): ``oauth_server/cimd.py`` fetches
  documents through the project's one outbound fetcher and applies the toolkit's own rules to the
  URL and the cache lifetime rather than copies of them.
"""

from __future__ import annotations

from typing import Any


class RefreshTokenHook:
    """Mixin before ``OAuth2Validator``: ``refresh_token_created(request, token)`` is called with
    every refresh token row the validator creates."""

    def _create_refresh_token(
        self, request: Any, refresh_token_code: str, access_token: Any, previous_refresh_token: Any
    ) -> Any:
        token = super()._create_refresh_token(  # type: ignore[misc]  # OAuth2Validator's, after this
            request, refresh_token_code, access_token, previous_refresh_token
        )
        self.refresh_token_created(request, token)
        return token

    def refresh_token_created(self, request: Any, token: Any) -> None:
        """Called with each refresh token row just created; does nothing unless overridden."""


def validate_client_id_url(client_id: str) -> Any:
    """The parsed ``client_id`` URL (``urllib.parse.ParseResult``), or ``CIMDError`` when the CIMD
    spec's rules refuse it (https, a host, a path, no userinfo, fragment or dot segments)."""
    from oauth2_provider.cimd import _validate_client_id_url

    return _validate_client_id_url(client_id)


def effective_max_age(cache_control: str | None) -> int:
    """Seconds a fetched document may be cached, from its ``Cache-Control`` header, bounded as the
    toolkit's own fetcher bounds it (``oauth2_provider.cimd._effective_max_age``)."""
    from oauth2_provider.cimd import _effective_max_age

    return int(_effective_max_age(cache_control))
