"""django-oauth-toolkit's request validator, with what MCP's authorization server adds:

- the token's audience: the RFC 8707 ``resource`` of the grant (or of the token request, which
  may narrow it), a resource of ours or ``invalid_target`` (``tokens.audience``), put on the
  request for the token generator;
- a code or refresh token of a deactivated user: ``invalid_grant`` (``user_grants`` ends them);
- a code used twice: ``invalid_grant``, and the tokens the first use got are revoked (RFC 6749
  §4.1.2: the server SHOULD revoke all tokens previously issued based on that code);
- audit rows for authorizations, token issues and refreshes, reuses and revocations.

A rotated refresh token used again is refused and ends its whole family: the toolkit's
``REFRESH_TOKEN_REUSE_PROTECTION`` (OAuth 2.1 §4.3.1); we record it.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_grant_model, get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator

from mcp_django.compat.oauth2_provider import RefreshTokenHook

from .models import SpentCode, record
from .revocations import revoke
from .tokens import audience

SPENT_CODE_SECONDS = 24 * 3600  # how long a second use of a code still revokes the first's tokens


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()


def _resources(request: Any) -> list[str]:
    """The token request's ``resource`` values (RFC 8707 allows several; oauthlib keeps one)."""
    values = [v for k, v in (getattr(request, "decoded_body", None) or []) if k == "resource"]
    if not values and isinstance(getattr(request, "resource", None), str):
        values = [request.resource]
    return [v for v in values if v.strip()]


def _client_id(request: Any) -> str:
    client = getattr(request, "client", None)
    return str(getattr(client, "client_id", "") or getattr(request, "client_id", "") or "")


def _active(request: Any) -> bool:
    """The grant's user may still sign in (issue 37 item 3): a deactivated account's codes and
    refresh tokens get ``invalid_grant`` (RFC 6749 §5.2), even where a bulk ``update()``
    deactivated it without the signal that ends its grants (``user_grants``)."""
    return bool(getattr(getattr(request, "user", None), "is_active", False))


def plain_http_allowed(redirect_uri: str) -> bool:
    """RFC 9700 §2.1: no plain-http redirect URI, except to the client's own machine, which native
    clients (VS Code, Claude Code, the SDKs) listen on over http (RFC 8252 §7.3). The toolkit
    allows a scheme for every host, so ``http`` stays in its list for loopback only, checked here."""
    parts = urlsplit(redirect_uri)
    return parts.scheme != "http" or parts.hostname in ("127.0.0.1", "::1", "localhost")


class MCPValidator(RefreshTokenHook, OAuth2Validator):  # type: ignore[misc]
    def validate_redirect_uri(
        self, client_id: str, redirect_uri: str, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if not plain_http_allowed(redirect_uri):
            return False
        return bool(super().validate_redirect_uri(client_id, redirect_uri, request, *args, **kwargs))

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        grant = get_grant_model().objects.filter(code=code, application=client).first()
        if grant is None:
            spent = SpentCode.objects.filter(digest=_digest(code)).first()
            if spent is not None:
                if spent.token_family is not None:
                    family = get_refresh_token_model().objects.filter(token_family=spent.token_family)
                    first = family.select_related("application").first()
                    if first is not None and first.application is not None:
                        revoke(first.user_id, first.application.client_id)  # on /mcp too
                    get_refresh_token_model().revoke_family(spent.token_family)
                record(
                    "code_reused",
                    client_id=_client_id(request),
                    detail="a code was used twice: the tokens it got are revoked",
                )
            return False
        valid = bool(super().validate_code(client_id, code, client, request, *args, **kwargs))
        if valid and not _active(request):
            return False  # invalid_grant: the user was deactivated after consenting
        if valid:
            request.mcp_audience = audience(_resources(request) or list(grant.resource or []), request)
        return valid

    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        valid = bool(super().validate_refresh_token(refresh_token, client, request, *args, **kwargs))
        if not valid:
            reused = (
                get_refresh_token_model()
                .objects.filter(token_checksum=_digest(refresh_token), revoked__isnull=False)
                .first()
            )
            if reused is not None:
                if reused.application is not None:
                    revoke(reused.user_id, reused.application.client_id)  # the family's JWTs too
                record(
                    "refresh_reused",
                    user=reused.user,
                    client_id=_client_id(request),
                    detail="a rotated refresh token was used again: its family is revoked",
                )
            return False
        if not _active(request):
            return False  # invalid_grant: a deactivated user's clients refresh nothing
        instance = request.refresh_token_instance
        request.mcp_audience = audience(_resources(request) or list(instance.resource or []), request)
        return True

    def save_authorization_code(
        self, client_id: str, code: dict[str, Any], request: Any, *args: Any, **kwargs: Any
    ) -> None:
        super().save_authorization_code(client_id, code, request, *args, **kwargs)
        record("authorized", user=request.user, client_id=client_id, detail=" ".join(request.scopes or ()))

    def refresh_token_created(self, request: Any, token: Any) -> None:
        request.mcp_token_family = token.token_family

    def save_bearer_token(self, token: dict[str, Any], request: Any, *args: Any, **kwargs: Any) -> Any:
        saved = super().save_bearer_token(token, request, *args, **kwargs)
        target = getattr(request, "mcp_target", None)
        if target is not None:  # RFC 8693 (exchange.py): who, for which upstream, what scope
            record("exchanged", user=request.user, client_id=_client_id(request),
                   detail=f"for {target}: {token.get('scope', '')}".strip())
            return saved
        kind = "refreshed" if request.grant_type == "refresh_token" else "token"
        record(kind, user=request.user, client_id=_client_id(request), detail=str(token.get("scope", "")))
        return saved

    def invalidate_authorization_code(
        self, client_id: str, code: str, request: Any, *args: Any, **kwargs: Any
    ) -> None:
        super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)
        now = timezone.now()
        SpentCode.objects.filter(expires_at__lt=now).delete()
        SpentCode.objects.update_or_create(
            digest=_digest(code),
            defaults={
                "token_family": getattr(request, "mcp_token_family", None),
                "expires_at": now + timedelta(seconds=SPENT_CODE_SECONDS),
            },
        )

    def revoke_token(
        self, token: str, token_type_hint: str | None, request: Any, *args: Any, **kwargs: Any
    ) -> None:
        found = [
            m.objects.filter(token_checksum=_digest(token), application=request.client).first()
            for m in (get_access_token_model(), get_refresh_token_model())
        ]
        for row in found:
            if row is not None:
                revoke(row.user_id, _client_id(request))  # RFC 7009, in effect on /mcp too
        super().revoke_token(token, token_type_hint, request, *args, **kwargs)
        record("revoked", client_id=_client_id(request), detail=token_type_hint or "")
