"""The rows of acting for the user: ``Provider`` (an operator's), ``ConnectedToken`` (the vault: a
user's tokens at a provider, encrypted), ``ConnectAttempt`` (one run of the connect flow).

A provider's URLs pass the outbound rules when saved (``outbound.url_problem``, the http kind's
allow-list and private-address setting) and again when used; its client secret is the name of an
environment variable the http kind's rule allows (``registry.kinds.http_client.secret_env``),
never a value.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from simple_history.models import HistoricalRecords

from registry.kinds.http_client import secret_env

from .outbound import issuer_problem, url_problem


class Provider(models.Model):
    class Kind(models.TextChoices):
        AUTHORIZATION_CODE = "authorization_code", "authorization code (a connected account, in the vault)"
        TOKEN_EXCHANGE = "token_exchange", "token exchange (RFC 8693: the caller's own token)"

    slug = models.SlugField(max_length=64, unique=True,
                            help_text="Named by http tools (\"call as the user through provider\") and in "
                            "the connect page's URL, /connect/<slug>/.")
    name = models.CharField(max_length=200, help_text="Shown to users: \"Connect your <name> account\".")
    kind = models.CharField(
        max_length=32, choices=Kind.choices, default=Kind.AUTHORIZATION_CODE,
        help_text="Token exchange: for a service that trusts this server's authorization server (or "
        "the same identity provider); nothing is stored, no connect page.")
    authorization_url = models.URLField("authorization URL", max_length=2048, blank=True,
                                        help_text="Authorization code providers only.")
    token_url = models.URLField("token URL", max_length=2048)
    revocation_url = models.URLField("revocation URL", max_length=2048, blank=True,
                                     help_text="RFC 7009: called when a user or staff revokes a token.")
    scopes = models.CharField(max_length=1000, blank=True,
                              help_text="Space-separated, as the provider names them.")
    resource = models.URLField(
        "target resource", max_length=2048, blank=True,
        help_text="Token exchange only: the service's resource (RFC 8693 `resource`), the audience "
        "of the tokens it gets.")
    client_id = models.CharField("client id", max_length=500)
    client_secret_env = models.CharField(
        "client secret environment variable", max_length=128, blank=True,
        help_text="The client secret is read from this variable when used; empty: a public client "
        "(PKCE only).")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords(excluded_fields=["updated_at"])

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.name or self.slug

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.kind == self.Kind.TOKEN_EXCHANGE:
            if not self.resource:
                errors["resource"] = "a token exchange provider names the service's resource"
            if self.token_url and (problem := issuer_problem(self.token_url)):
                errors["token_url"] = problem
            if not self.client_secret_env:
                # RFC 8693 §5: only an authenticated (confidential) client may exchange tokens.
                errors["client_secret_env"] = "a token exchange provider authenticates: name its secret"
        elif not self.authorization_url:
            errors["authorization_url"] = "an authorization code provider needs its authorization URL"
        for field in ("authorization_url", "token_url", "revocation_url"):
            value = getattr(self, field)
            if value and field not in errors and (problem := url_problem(value)):
                errors[field] = problem
        if self.client_secret_env and not secret_env.allowed(self.client_secret_env):
            errors["client_secret_env"] = f"{self.client_secret_env!r} cannot be used: {secret_env.rule()}"
        if errors:
            raise ValidationError(errors)


class ConnectedToken(models.Model):
    """One user's tokens at one provider. ``sealed`` is the MultiFernet token of their JSON
    (``cipher.py``); nothing else here is secret. Never shown: not in the admin, the API, exports."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="tokens")
    sealed = models.BinaryField(editable=False)
    scope = models.CharField(max_length=1000, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="When the access token expires.")
    refreshable = models.BooleanField(default=False, help_text="Holds a refresh token.")
    created_at = models.DateTimeField(auto_now_add=True)
    refreshed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "provider"], name="one_token_per_user_provider"),
        ]
        verbose_name = "connected account"

    def __str__(self) -> str:
        return f"{self.user} at {self.provider}"


class ConnectAttempt(models.Model):
    """One run of the connect flow. ``reference`` (the signed link's nonce) is unique: a link
    starts one flow only. ``state_digest`` (SHA-256 of the ``state`` sent to the provider) finds it
    on the callback, once (``used_at``); the PKCE ``verifier`` lives here until then."""

    reference = models.CharField(max_length=64, unique=True)
    state_digest = models.CharField(max_length=64, unique=True)
    verifier = models.CharField(max_length=128)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="+")
    elicitation_id = models.CharField(max_length=128, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    used_at = models.DateTimeField(null=True, blank=True)
