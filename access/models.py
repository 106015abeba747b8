"""API keys and the audit log of ``/mcp``.

Their own app, not the registry's: keys and audit rows are not definitions served to clients, the
registry's migration chain stays its own, and ``mcp_protocol`` keeps only the Django-free parts
(``mcp_protocol/auth/``: key ring, grants, limits, audit queue). ``keys.py`` and ``audit.py`` here
implement that package's ``KeySource`` and ``AuditSink`` against these models.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from simple_history.models import HistoricalRecords

from mcp_protocol.auth.keys import KeyRecord, digest, new_token
from mcp_protocol.auth.principal import Grant, Rate


def everything() -> list[str]:
    return ["*"]


_RATE = re.compile(r"\s*[0-9]+\s*/\s*[0-9]+(\.[0-9]+)?\s*")


def _rate_or_error(value: str) -> None:
    """``N/S`` written out, as the help text, the admin and the docs say (``Rate.parse`` alone
    would take a bare ``10`` as 10 per second)."""
    try:
        if value.strip() and not _RATE.fullmatch(value):
            raise ValueError(f"a rate is N/S, N requests per S seconds, not {value!r}")
        Rate.parse(value)
    except ValueError as exc:
        raise ValidationError(f"{exc} (e.g. 60/60 for 60 requests a minute)") from None


def _names(value: Any) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationError('must be a list of strings, e.g. ["search", "fetch"] or ["*"]')


def _served(kind: str, value: Any) -> None:
    """Every name (but ``*``) is a tool or prompt the MCP provider serves: a key scoped to a name
    that is misspelt or gone would silently grant nothing of it."""
    if not isinstance(value, list):
        return  # _names says what is wrong
    names = [v for v in value if isinstance(v, str) and v != "*"]
    if not names:
        return
    from django.utils.module_loading import import_string

    from mcp_django.conf import mcp_settings

    # A provider of its own, built now from the database as this transaction sees it: the serving
    # one may not have heard of a change yet (it learns after commit).
    spec = mcp_settings.PROVIDER
    snapshot = import_string(spec["BACKEND"])(**spec.get("OPTIONS", {})).snapshot()
    find = snapshot.tool if kind == "tool" else snapshot.prompt
    unknown = [name for name in names if find(name) is None]
    if unknown:
        raise ValidationError(f"no {kind} named {', '.join(map(repr, unknown))} is served (unknown or "
                              f"disabled); name {kind}s the server lists, or \"*\" for every {kind}")


def _served_tools(value: Any) -> None:
    _served("tool", value)


def _served_prompts(value: Any) -> None:
    _served("prompt", value)


STATUSES = ("active", "expired", "revoked")  # ApiKey.status, in the order lists offer them


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def with_status(self, status: str) -> ApiKeyQuerySet:
        """The keys whose ``status`` is ``status`` (one of ``STATUSES``), filtered in SQL."""
        if status == "revoked":
            return self.filter(revoked_at__isnull=False)
        live, now = self.filter(revoked_at__isnull=True), timezone.now()
        if status == "expired":
            return live.filter(expires_at__lte=now)
        if status == "active":
            return live.filter(models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now))
        raise ValueError(f"a key's status is one of {', '.join(STATUSES)}, not {status!r}")


class ApiKey(models.Model):
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="mcp_api_keys")
    prefix = models.CharField(max_length=16, unique=True, editable=False,
                              help_text="The public part of the key (mcp_<prefix>_…), to tell keys apart.")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True, db_index=True)  # workers poll its maximum
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: never expires.")
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    tools = models.JSONField(default=everything, blank=True, validators=[_names, _served_tools],
                             help_text='Tool names this key may list and call; ["*"]: every tool.')
    resources = models.JSONField(default=everything, blank=True, validators=[_names],
                                 help_text='Resource URIs and URI templates; ["*"]: every resource.')
    prompts = models.JSONField(default=everything, blank=True, validators=[_names, _served_prompts],
                               help_text='Prompt names; ["*"]: every prompt.')
    tags = models.JSONField(default=list, blank=True, validators=[_names],
                            help_text="Definitions carrying any of these tags are granted too.")
    rate = models.CharField(max_length=32, blank=True, validators=[_rate_or_error],
                            help_text="N/S: this key's own request rate (empty: the server default).")
    tool_rate = models.CharField(max_length=32, blank=True, validators=[_rate_or_error],
                                 help_text="N/S per tool (empty: the server default).")
    # Every version of a key and its scopes (issue 28), with the user who made it (simple-history's
    # HistoryRequestMiddleware); never its digest, nor the last use (written on every call).
    history = HistoricalRecords(excluded_fields=["digest", "last_used_at"], cascade_delete_history=False)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} (mcp_{self.prefix}_…)"

    @classmethod
    def issue(cls, name: str, **fields: Any) -> tuple[ApiKey, str]:
        """A new key and its token. The token is shown once and never stored."""
        token, prefix = new_token()
        key = cls.objects.create(name=name, prefix=prefix, digest=digest(token), **fields)
        return key, token

    def revoke(self, when: datetime | None = None) -> None:
        if self.revoked_at is None:
            self.revoked_at = when or timezone.now()
            self.save(update_fields=["revoked_at", "updated_at"])

    @property
    def status(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= timezone.now():
            return "expired"
        return "active"

    def grant(self) -> Grant:
        return Grant.of(tools=self.tools, resources=self.resources, prompts=self.prompts, tags=self.tags)

    def record(self) -> KeyRecord:
        return KeyRecord(id=self.pk, prefix=self.prefix, digest=self.digest, grant=self.grant(),
                         expires_at=self.expires_at.timestamp() if self.expires_at else None,
                         rate=Rate.parse(self.rate), tool_rate=Rate.parse(self.tool_rate))


class AuditRecord(models.Model):
    """One tool call, resource read or prompt get on ``/mcp`` (``mcp_protocol/auth/audit.py``)."""

    time = models.DateTimeField(db_index=True)
    principal = models.CharField(max_length=300, help_text="Key prefix, or OAuth issuer and subject.")
    principal_id = models.CharField(max_length=300, blank=True, db_index=True)
    # The session id's first characters only (mcp_protocol.session.SHOWN_PREFIX): the id is its
    # client's credential, and the audit log is read by staff.
    session = models.CharField(max_length=100, blank=True, help_text="The session id's first characters.")
    revision = models.CharField(max_length=20)
    method = models.CharField(max_length=40)
    name = models.CharField(max_length=500, db_index=True)
    arguments = models.JSONField(null=True, blank=True, help_text="Size-capped; secrets redacted.")
    # No index: a handful of values. The API and admin ask for the newest rows of one outcome;
    # SQLite without ANALYZE (Django never runs it) searched this index and sorted every row of
    # that outcome (340 ms for a page of "ok" in 200,000 rows) where a backward scan of ``time``
    # stops after the page (0.6 ms). It also cost the drain ~0.5 us a row
    # (bench/results/2026-11-24-audit-drain-session12.md).
    outcome = models.CharField(max_length=20)
    error = models.TextField(blank=True)
    duration_ms = models.FloatField()
    # The endpoint called (issue 39): a virtual server's slug; empty for the catch-all /mcp. No
    # index, as ``outcome``: a handful of values, read with the newest rows.
    server = models.CharField(max_length=64, blank=True, default="",
                              help_text="The virtual server called (/mcp/<slug>); empty: /mcp.")
    # Set by the Redis spool's drain (access/drain.py): the entry's id in the spool, so an entry
    # delivered twice (a drain killed between its commit and its ack) is stored once. Empty for
    # rows the database sink wrote; the unique index covers only the spooled rows, so that sink
    # pays for no fifth index.
    spool_id = models.CharField(max_length=64, null=True, blank=True, editable=False)

    class Meta:
        verbose_name = "audit record"
        ordering = ["-time"]
        constraints = [
            models.UniqueConstraint(fields=["spool_id"], condition=models.Q(spool_id__isnull=False),
                                    name="access_audit_spool_id_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.time:%Y-%m-%d %H:%M:%S} {self.principal} {self.method} {self.name} {self.outcome}"


class Approval(models.Model):
    """A call of a staff-approved tool waiting for (or given) a decision (``access/approvals.py``;
    the policy: ``mcp_protocol/approvals.py``). The arguments are the call's as sent: they may hold
    secrets, so only staff with ``decide_approval`` see them (admin and API alike)."""

    class Decision(models.TextChoices):
        PENDING = "", "Pending"
        APPROVED = "approved", "Approved"
        DENIED = "denied", "Denied"
        EXPIRED = "expired", "Expired (no decision in time)"
        CANCELLED = "cancelled", "Cancelled (the call ended first)"

    tool = models.CharField(max_length=128, db_index=True)
    arguments = models.JSONField(default=dict, blank=True)
    # SHA-256 of the arguments' canonical JSON: two calls with the same arguments are told apart
    # from different ones at a glance, without reading them.
    arguments_digest = models.CharField(max_length=64)
    principal = models.CharField(max_length=300, help_text="Who called: a key prefix, or issuer and subject.")
    principal_id = models.CharField(max_length=300, blank=True)
    session = models.CharField(max_length=100, blank=True, help_text="The session id's first characters.")
    server = models.CharField(max_length=64, blank=True, default="",
                              help_text="The virtual server called (/mcp/<slug>); empty: /mcp.")
    created = models.DateTimeField(default=timezone.now, db_index=True)
    expires_at = models.DateTimeField(help_text="The call stops waiting then; no decision is taken after.")
    decision = models.CharField(max_length=16, choices=Decision.choices, blank=True, default="")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        permissions = [("decide_approval", "Can approve or deny a waiting tool call")]

    def __str__(self) -> str:
        return f"{self.tool} for {self.principal} ({self.get_decision_display()})"

    @property
    def pending(self) -> bool:
        return not self.decision and self.expires_at > timezone.now()
