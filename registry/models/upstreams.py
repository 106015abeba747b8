"""Upstream MCP servers: another server's tools, resources, resource templates and prompts,
mirrored into the registry as rows of the ``upstream`` kind (issue 40).

An ``Upstream`` row says where the server is and how to reach it (transport, URL through the http
kind's host allow-list and private-address guard, authentication by reference to an environment
variable: never a secret in the database), how long to wait and how many calls at once. The sync
(``registry/upstreams/``) lists the upstream and upserts one mirrored row per definition, keyed on
(upstream, original name), in one transaction per sync, so history, change sets, virtual servers,
grants and the admin treat them as any row. The mirrored rows carry ``UpstreamMirror``'s fields.
Health is written by the sync and the calls, outside the row's version: a plain queryset update
of the health fields (``registry/upstreams/health.py``), since ``Versioned.save(update_fields=…)``
would still bump the version (staling an operator's open form) and write a history row.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction

from ..changes.publish import ChangeQuerySet
from ..changes.reach import Touches
from ..validation.validators import validate_http_url, validate_string_list
from .concurrency import Versioned
from .history import Recorded

PREFIX_MAX = 16


def validate_prefix(value: str) -> None:
    import re

    if not re.fullmatch(r"[a-z][a-z0-9]{0,15}", value or ""):
        raise ValidationError(
            f"A prefix is 1-{PREFIX_MAX} lower-case letters and digits, starting with a letter: mirrored "
            "names are <prefix>_<name>.", code="invalid_prefix")


class Upstream(Versioned, Recorded):
    # The upstream row itself changes no list: its mirrored rows do, each as its own change.
    mcp_kind = "upstreams"

    class Transport(models.TextChoices):
        AUTO = "auto", "Streamable HTTP, falling back to HTTP+SSE (2024-11-05)"
        STREAMABLE_HTTP = "streamable-http", "Streamable HTTP"
        SSE = "sse", "HTTP+SSE (2024-11-05)"

    class Auth(models.TextChoices):
        NONE = "none", "None"
        HEADER = "header", "A static header from an allowed environment variable"
        CLIENT_CREDENTIALS = "client_credentials", "OAuth client credentials"
        # Issue 42 item 3: each caller's own token at a connection provider (``connection``).
        USER = "user", "As the user, through a connection provider"

    class ListingAuth(models.TextChoices):
        """How a ``user`` upstream is listed (sync, listen stream, the admin's test): nobody is
        calling then, so no user's token is there to send."""

        NONE = "none", "None"
        HEADER = "header", "A static header from an allowed environment variable"
        CLIENT_CREDENTIALS = "client_credentials", "OAuth client credentials"

    class Health(models.TextChoices):
        UNKNOWN = "unknown", "Not synced yet"
        UP = "up", "Up"
        DEGRADED = "degraded", "Degraded"
        DOWN = "down", "Down"

    name = models.CharField(max_length=128, unique=True, help_text="What the operator calls it.")
    prefix = models.CharField(
        max_length=PREFIX_MAX, unique=True, validators=[validate_prefix],
        help_text="The namespace: mirrored names are <prefix>_<name> (at most 64 characters).",
    )
    url = models.CharField(
        "URL", max_length=2048, validators=[validate_http_url],
        help_text="The upstream's MCP endpoint. Its host must be in REGISTRY_HTTP_ALLOWED_HOSTS.")
    transport = models.CharField(max_length=16, choices=Transport.choices, default=Transport.AUTO)
    auth = models.CharField(max_length=24, choices=Auth.choices, default=Auth.NONE)
    # Issue 42 item 3: a provider's slug (connections.Provider; by slug, as Tool.http_connection:
    # the registry sits below the connections app). Calls send each caller's own token there.
    connection = models.SlugField(
        "call as the user through provider", max_length=64, blank=True,
        help_text="user auth: a provider's slug (Connected services). Each caller's own token at that "
        "provider is sent as Authorization: Bearer, over a session of that caller's alone.")
    sync_auth = models.CharField(
        "listing authentication", max_length=24, choices=ListingAuth.choices, default=ListingAuth.NONE,
        blank=True,
        help_text="user auth: how the sync lists the upstream (no user is calling then); the header "
        "and OAuth fields below describe that credential.")
    auth_header = models.CharField(max_length=64, blank=True, default="Authorization",
                                   help_text="header auth: the header sent (e.g. Authorization).")
    auth_secret_env = models.CharField(
        max_length=128, blank=True,
        help_text="header auth: the environment variable holding the header's value; client credentials: "
        "the one holding the client secret. Allowed as the http kind's secrets are.")
    oauth_token_url = models.CharField("OAuth token URL", max_length=2048, blank=True,
                                       validators=[validate_http_url])
    oauth_client_id = models.CharField("OAuth client id", max_length=255, blank=True)
    oauth_scopes = models.JSONField("OAuth scopes", default=list, blank=True,
                                    validators=[validate_string_list])
    timeout = models.FloatField(default=30.0, help_text="Seconds a call may take.")
    connect_timeout = models.FloatField(default=5.0, help_text="Seconds to connect.")
    max_concurrency = models.PositiveIntegerField(default=16,
                                                  help_text="Calls in flight at once, per worker.")
    sync_interval = models.PositiveIntegerField(default=300,
                                                help_text="Seconds between periodic syncs; 0: never.")
    review_syncs = models.BooleanField(
        default=False, help_text="A sync shows its diff and waits for approval instead of applying.")
    enabled = models.BooleanField(default=True)

    # Health: written by syncs and calls with a plain queryset update (upstreams/health.py): not the
    # operator's, so no version bump, no history row, no change published.
    health = models.CharField(max_length=16, choices=Health.choices, default=Health.UNKNOWN, editable=False)
    health_detail = models.TextField(blank=True, editable=False)
    last_sync_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_sync_ok_at = models.DateTimeField(null=True, blank=True, editable=False)
    latency_ms = models.FloatField(null=True, blank=True, editable=False)
    # The upstream's InitializeResult as last seen: serverInfo, protocolVersion, capabilities.
    server_info = models.JSONField(default=dict, blank=True, editable=False)
    # Review mode (``review_syncs``): the last sync's listing, what it would change and a
    # fingerprint of the mirrored rows it was planned against (``registry/upstreams/review.py``);
    # empty when nothing waits. Written by the sync like health: not an operator's edit.
    pending_sync = models.JSONField(default=dict, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ChangeQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        # Across fields: the URL's host, the auth's environment variables (validation/upstreams.py).
        from ..kinds.http_client.upstream_rules import upstream_errors

        errors = upstream_errors(self)
        if errors:
            raise ValidationError(errors)

    def mirrored_rows(self) -> list[models.Model]:
        """Every row mirrored from this upstream, of the four kinds."""
        from . import Prompt, Resource, ResourceTemplate, Tool

        return [row for model in (Tool, Resource, ResourceTemplate, Prompt)
                for row in model._default_manager.filter(upstream=self)]

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        """Its mirrored rows go with it, in the same transaction (one change set: clients hear
        ``list_changed`` once); the foreign key PROTECTs them from any other deletion."""
        with transaction.atomic():
            for row in self.mirrored_rows():
                row.delete()  # one by one: each publishes its change, as the admin's delete does
            return super().delete(*args, **kwargs)

    def touches(self) -> Touches:
        """No endpoint hears of the upstream row itself (its message reaches none: the workers only
        rebuild, to call with its new settings); its mirrored rows' changes reach theirs."""
        return Touches()


class UpstreamMirror(models.Model):
    """The fields of a row mirrored from an upstream (Tool, Resource, ResourceTemplate, Prompt of
    kind ``upstream``): which upstream, under which original name (or URI, or URI template), what
    it last said (``upstream_definition``: its wire JSON; upstream-owned fields are read from
    there), which of our columns the operator overrode (kept over the upstream's on every sync),
    and whether the last good listing still had it."""

    upstream = models.ForeignKey(Upstream, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    upstream_name = models.CharField("upstream name", max_length=2048, blank=True)
    upstream_definition = models.JSONField(default=dict, blank=True)
    upstream_overrides = models.JSONField(default=list, blank=True, validators=[validate_string_list])
    upstream_missing = models.BooleanField(
        default=False, help_text="The last good listing of its upstream did not have it: kept, not served.")

    class Meta:
        abstract = True
