"""What the built-in authorization server keeps beside django-oauth-toolkit's own tables (clients,
codes, tokens): its signing keys, the codes already exchanged (so a second use revokes what the
first one got, RFC 6749 §4.1.2), the upstream resources it exchanges tokens for (RFC 8693,
``ExchangeTarget``), and an audit row per authorization, token, exchange and revocation."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords


class SigningKey(models.Model):
    """A private key that signs access tokens; its public half is in the JWKS until it retires.

    The newest key older than ``KEY_PUBLISH_SECONDS`` signs (``keys.py``); ``retired_at`` takes a
    key out of the JWKS once every token it signed has expired. The private key is never shown,
    logged, or returned by ``__str__``/``__repr__``."""

    kid = models.CharField(max_length=64, unique=True)
    algorithm = models.CharField(max_length=16)
    private_key = models.TextField(editable=False)  # PEM, PKCS#8
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.algorithm} key {self.kid}"

    def __repr__(self) -> str:
        return f"<SigningKey {self.kid} {self.algorithm}>"


class ClientProfile(models.Model):
    """What a client says of itself that the toolkit's Application does not keep (RFC 7591 §2:
    ``logo_uri``, ``client_uri``), from its registration or its metadata document, for the
    consent page. Only https URLs are kept (``profiles.py``)."""

    client_id = models.CharField(max_length=255, unique=True)
    logo_uri = models.URLField(max_length=500, blank=True)
    client_uri = models.URLField(max_length=500, blank=True)


class SpentCode(models.Model):
    """An authorization code already exchanged, by digest, and the token family it started."""

    digest = models.CharField(max_length=64, unique=True)
    token_family = models.UUIDField(null=True)
    expires_at = models.DateTimeField(db_index=True)


class Revocation(models.Model):
    """A revoked grant, as ``/mcp`` learns it (``revocations.py``): the access tokens of this
    subject and client issued at or before ``before`` (epoch seconds) are refused."""

    subject = models.CharField(max_length=255)
    client_id = models.CharField(max_length=255)
    before = models.FloatField(db_index=True)


class ExchangeTarget(models.Model):
    """An upstream resource an operator lets this server issue tokens for by token exchange (RFC
    8693 §2.1 ``resource``/``audience``): a token for ``resource`` as its ``aud``, carrying at most
    ``scopes`` of what the subject token holds. Nothing else can be an exchange's audience
    (``invalid_target``), and never this server's own ``/mcp`` (the admin's form refuses it, the
exchange too)."""

    name = models.SlugField(max_length=64, unique=True,
                            help_text="Also accepted as the exchange's `audience` (RFC 8693 §2.1).")
    resource = models.URLField(
        "resource URL", max_length=2048, unique=True,
        help_text="The upstream's RFC 8707 resource: the `aud` of the tokens issued for it.")
    scopes = models.CharField(
        max_length=1000, blank=True,
        help_text="Space-separated: the most an exchanged token may carry (also limited to the "
        "subject token's scopes). Empty: exchanged tokens carry no scope.")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords(excluded_fields=["updated_at"])

    class Meta:
        ordering = ["name"]
        verbose_name = "token exchange target"

    def __str__(self) -> str:
        return f"{self.name} ({self.resource})"

    def allowed_scopes(self) -> set[str]:
        return set(self.scopes.split())


class OAuthEvent(models.Model):
    class Kind(models.TextChoices):
        AUTHORIZED = "authorized", "authorized a client"
        DENIED = "denied", "denied a client"
        TOKEN = "token", "token issued"
        REFRESHED = "refreshed", "token refreshed"
        REVOKED = "revoked", "token revoked"
        CODE_REUSED = "code_reused", "code used twice: its tokens revoked"
        REFRESH_REUSED = "refresh_reused", "rotated refresh token reused: its family revoked"
        CLIENT_REVOKED = "client_revoked", "a user revoked a client"
        KEY_ROTATED = "key_rotated", "signing key rotated"
        EXCHANGED = "exchanged", "token exchanged for an upstream (RFC 8693)"
        EXCHANGE_REFUSED = "exchange_refused", "token exchange refused"

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    kind = models.CharField(max_length=32, choices=Kind.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    client_id = models.CharField(max_length=255, blank=True)
    detail = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-at"]
        verbose_name = "OAuth event"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.kind} {self.client_id}"


def record(kind: str, *, user: object = None, client_id: str = "", detail: str = "") -> None:
    """One audit row; never a token or a key in ``detail``."""
    user_id = getattr(user, "pk", None) if getattr(user, "is_authenticated", False) else None
    OAuthEvent.objects.create(kind=kind, user_id=user_id, client_id=client_id[:255], detail=detail[:500])
