"""Management API tokens: bearer tokens for automation (CI, scripts) on ``/api/v1/``.

Not the API keys of ``/mcp`` (those scope MCP clients to tool sets); a management API token acts
as its Django user, with that user's model permissions, on the REST management API (and on
``/mcp`` only where ``MCP["PRINCIPAL_RESOLVER"]`` is the Django-user resolver, ``django_user``).

Why our own model rather than DRF's ``authtoken``: DRF stores the token itself, so a database dump
or a read-only SQL injection hands out working credentials. Here only the SHA-256 digest is stored
(the token is 256 random bits, so a fast hash is enough: there is nothing to brute-force), the
token is shown once at creation, and a user may hold several named, expiring, revocable tokens.
Lookup is by digest (a unique index), so verification does no comparison an attacker could time.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

PREFIX = "mcpm_"  # recognisable in logs and by secret scanners; never logged itself
LAST_USED_EVERY = timedelta(minutes=1)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ManagementToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="management_tokens")
    name = models.CharField(max_length=128, help_text="What the token is for, e.g. 'CI deploy'.")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    hint = models.CharField(max_length=16, editable=False, help_text="The token's first characters.")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: never expires.")
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        db_table = "registry_managementtoken"  # made by the registry app, where tokens began
        ordering = ["user_id", "name", "id"]
        verbose_name = "management API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.hint}…)"

    def clean(self) -> None:
        if self._state.adding and self.expires_at is not None and self.expires_at <= timezone.now():
            raise ValidationError({"expires_at": "A new token must expire in the future."})

    @classmethod
    def issue(cls, user: models.Model, name: str, expires_at: object = None) -> tuple[ManagementToken, str]:
        """Create a token, validated by ``full_clean``; returns the row and the token, which is
        not stored and cannot be shown again."""
        token = PREFIX + secrets.token_urlsafe(32)
        row = cls(user=user, name=name, digest=digest(token), hint=token[:9], expires_at=expires_at)
        row.full_clean()
        row.save()
        return row, token

    @classmethod
    def authenticate(cls, token: str) -> ManagementToken | None:
        """The row of a live token (not expired, its user active), or None. Marks it used."""
        if not token.startswith(PREFIX):
            return None
        row = cls.objects.select_related("user").filter(digest=digest(token)).first()
        if row is None or row.expired or not row.user.is_active:
            return None
        now = timezone.now()
        # At most one write a minute per token: a write on every GET would serialise reads
        # behind the database's write lock (on SQLite it cost 35 ms a request).
        if row.last_used_at is None or now - row.last_used_at > LAST_USED_EVERY:
            cls.objects.filter(pk=row.pk).update(last_used_at=now)
        return row

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()
