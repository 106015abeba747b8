"""``credential_for``: the token an http tool or an upstream server's call path sends as the user,
the ``CredentialSource`` of ``registry.kinds.http_client.acting``; ``forget_credential``: its
``CredentialForget`` (the service refused the token); ``step_up``: its ``CredentialStepUp`` (the
service asked for a scope the token lacks).

Which user: a token of the built-in authorization server names the Django user in ``sub`` (the
principal ``oauth:<issuer> <sub>`` with ``OAUTH_ISSUER=self``); an API key acts for its owner when
it has one. Anyone else (anonymous, a token of another issuer, a key without owner) cannot be
acted for: ``CannotActAsUser`` says to sign in.

A token exchange provider (``Provider.kind``) needs no user of ours and no vault: the caller's own
OAuth token is exchanged for one the service accepts (``exchange.py``, RFC 8693).
"""

from __future__ import annotations

from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.db import close_old_connections
from django.urls import reverse

from access.models import ApiKey
from mcp_django.conf import access_settings, self_issuer
from registry.kinds.http_client.acting import CannotActAsUser, ConnectionNeeded

from . import cipher, exchange, reference, vault
from .models import ConnectedToken, Provider

OWNER_SECONDS = 60  # a key's owner, cached (changing a key's owner is rare; revoking it ends its use anyway)


def _key_owner(key_id: str) -> int | None:
    cache_key = f"connections:key-owner:{key_id}"
    cached = cache.get(cache_key)
    if cached is not None:
        return int(cached) or None
    close_old_connections()
    owner = ApiKey.objects.filter(pk=int(key_id)).values_list("owner_id", flat=True).first()
    cache.set(cache_key, owner or 0, OWNER_SECONDS)
    return int(owner) if owner else None


def user_of(principal: str | None) -> int | None:
    """The Django user ``principal`` acts for, or None."""
    if not principal:
        return None
    if principal.startswith("key:") and principal[4:].isdigit():
        return _key_owner(principal[4:])
    config = access_settings()
    prefix = f"oauth:{config['OAUTH_ISSUER']} "
    if config["OAUTH_SELF"] and principal.startswith(prefix) and principal[len(prefix):].isdigit():
        return int(principal[len(prefix):])
    return None


def origin() -> str:
    """Where users reach this server: ``RESOURCE_URL``'s origin (as the authorization server's issuer)."""
    return self_issuer(str(access_settings()["RESOURCE_URL"]))


def connect_url(provider: str, user_id: int, elicitation_id: str) -> str:
    path = reverse("connections:connect", args=[provider])
    return f"{origin()}{path}?{urlencode({'ref': reference.make(user_id, provider, elicitation_id)})}"


async def credential_for(principal: str | None, provider: str, elicitation_id: str) -> str:
    found = await vault.provider_info_async(provider)
    if found is not None and found["enabled"] and found.get("kind") == Provider.Kind.TOKEN_EXCHANGE:
        return await exchange.token_for(principal, found)  # RFC 8693: no vault, no connect page
    user_id = await sync_to_async(user_of)(principal)
    if user_id is None:
        raise CannotActAsUser("sign in to this server as a user (an OAuth sign-in, or an API key "
                              "with an owner) so it can act for you")
    info = await vault.provider_info_async(provider)
    if info is None or not info["enabled"]:
        raise CannotActAsUser(f"the provider {provider!r} is not configured on this server")
    try:
        token = await vault.access_token(user_id, info["id"])
    except cipher.VaultLocked:
        raise CannotActAsUser("this server cannot read stored tokens (its vault key is missing or "
                              "wrong): tell its operator") from None
    if token is not None:
        return token
    raise ConnectionNeeded(info["name"], connect_url(provider, user_id, elicitation_id))


async def forget_credential(principal: str | None, provider: str, token: str) -> None:
    user_id = await sync_to_async(user_of)(principal)
    info = await vault.provider_info_async(provider)
    if user_id is None or info is None:
        return
    await vault.invalidate(user_id, info["id"], token)


def _grant(user_id: int, slug: str) -> tuple[Provider | None, str | None]:
    """The enabled provider ``slug`` and the scope the user's stored token was granted (None: no token)."""
    close_old_connections()
    provider = Provider.objects.filter(slug=slug, enabled=True).first()
    if provider is None:
        return None, None
    granted = (ConnectedToken.objects.filter(user_id=user_id, provider=provider)
               .values_list("scope", flat=True).first())
    return provider, granted


async def step_up(principal: str | None, provider: str, scope: str, elicitation_id: str) -> None:
    """A service answered ``insufficient_scope`` naming ``scope`` (RFC 6750 §3.1). Connecting again
    asks the provider for the provider's configured scopes (``Provider.scopes``, the connect view):
    the operator's bound, never widened by a service. So the user is sent to connect again
    (``ConnectionNeeded``) only when every scope asked for is among them and the stored grant
    lacks one; otherwise ``CannotActAsUser`` says why not (a scope beyond the bound is the
    operator's to add; a grant that already holds it would only loop)."""
    user_id = await sync_to_async(user_of)(principal)
    if user_id is None:
        raise CannotActAsUser("sign in to this server as a user so it can act for you")
    row, granted = await sync_to_async(_grant)(user_id, provider)
    if row is None or row.kind != Provider.Kind.AUTHORIZATION_CODE:
        raise CannotActAsUser(f"the provider {provider!r} has no connect page to grant more scopes")
    asked = set(scope.split())
    if not asked:
        raise CannotActAsUser(f"{row.name} named no scope to ask for: tell this server's operator")
    beyond = asked - set(row.scopes.split())
    if beyond:
        raise CannotActAsUser(
            f"this server asks {row.name} only for the scopes its operator configured for the provider "
            f"{provider!r}, and {' '.join(sorted(beyond))!r} is not among them: ask the operator to add it")
    if granted is not None and asked <= set(granted.split()):
        raise CannotActAsUser(f"your {row.name} connection was granted {scope!r} already, and "
                              f"{row.name} refuses it anyway: tell this server's operator")
    raise ConnectionNeeded(row.name, connect_url(provider, user_id, elicitation_id))
