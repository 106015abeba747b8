"""Tools: what a client lists (name, schemas, annotations, execution) and what a call does, one
kind among those code allows (``registry/kinds/``): a handler, an HTTP request to an allowed host,
or a text template. The base of every definition is ``base.py``'s ``Definition``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from ..kinds.http_client.validation import http_tool_errors, validate_http_headers, validate_result_pointer
from ..validation import apps_ui
from ..validation.templating import input_properties, template_problems
from ..validation.validators import (
    env_var_name,
    header_name,
    validate_http_url,
    validate_input_schema,
    validate_meta,
    validate_name,
    validate_object_schema,
    validate_tool_annotations,
)
from .base import Definition, check_handler
from .upstreams import UpstreamMirror


def default_input_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


class Tool(Definition, UpstreamMirror):
    mcp_kind = "tools"
    selection_kind = "tools"
    remembered = ("name", "tags")
    code_key = ("name", "TOOLS")

    class Kind(models.TextChoices):
        HANDLER = "handler", "Handler registered in code"
        HTTP = "http", "HTTP request to an allowed host"
        TEMPLATE = "template", "Text template"
        UPSTREAM = "upstream", "Mirrored from an upstream MCP server"

    name = models.CharField(max_length=128, unique=True, validators=[validate_name])
    input_schema = models.JSONField(default=default_input_schema, validators=[validate_input_schema])
    output_schema = models.JSONField(null=True, blank=True, validators=[validate_object_schema])
    annotations = models.JSONField(null=True, blank=True, validators=[validate_tool_annotations])
    execution = models.JSONField(
        null=True,
        blank=True,
        validators=[validate_meta],
        help_text='2025-11-25 "execution", e.g. {"taskSupport": "forbidden"}.',
    )
    class TaskSupport(models.TextChoices):
        # The spec's execution.taskSupport (2025-11-25 tools.mdx "Tool-Level Negotiation"; the
        # tasks extension io.modelcontextprotocol/tasks decides per call from it).
        FORBIDDEN = "forbidden", "Forbidden: always answered at once"
        OPTIONAL = "optional", "Optional: a task when the client supports tasks"
        REQUIRED = "required", "Required: only clients that support tasks may call it"

    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.TEMPLATE)
    task_support = models.CharField(
        max_length=16,
        choices=TaskSupport.choices,
        blank=True,
        help_text="Whether calls run as tasks. Blank: the kind's default (http: optional, "
        "slow APIs should not hold a request open; handler and template: forbidden).",
    )
    handler = models.CharField(max_length=128, blank=True, help_text="handler kind: a @tool_handler name.")
    class Approval(models.TextChoices):
        # Issue 42 item 5 (mcp_protocol/approvals.py): who must approve a call before it runs.
        NONE = "none", "None: calls run at once"
        CONFIRM = "confirm", "Confirm: the user is asked (form elicitation) before each call"
        STAFF = "staff", "Staff: each call waits for a decision in the approval queue"

    approval = models.CharField(
        "approval",
        max_length=8,
        choices=Approval.choices,
        blank=True,
        help_text="Blank: none, or for a tool annotated destructiveHint: true, the "
        "MCP_APPROVAL_DESTRUCTIVE_DEFAULT setting.",
    )
    # Tool search (issue 41): pinned tools are listed even when the endpoint lists only its
    # meta-tools, and carry _meta["anthropic/alwaysLoad"]: true for clients that defer the rest.
    always_load = models.BooleanField(
        "always load", default=False,
        help_text='Listed beside search_tools in search mode; sent as _meta["anthropic/alwaysLoad"].',
    )
    # MCP Apps (validation/apps_ui.py): the interactive view of this tool's results, a ui:// resource.
    ui_resource_uri = models.CharField(
        "app view (ui:// URI)", max_length=2048, blank=True,
        help_text="A ui:// resource served as text/html;profile=mcp-app; sent as _meta.ui.resourceUri.",
    )
    ui_visibility = models.JSONField(
        "app visibility", default=list, blank=True,
        help_text='Who may call the tool: ["model", "app"] (the default when empty), or one of them.',
    )
    class HttpMethod(models.TextChoices):
        GET = "GET"
        POST = "POST"
        PUT = "PUT"
        PATCH = "PATCH"
        DELETE = "DELETE"

    http_method = models.CharField(
        "HTTP method", max_length=8, choices=HttpMethod.choices, default=HttpMethod.POST
    )
    http_url = models.CharField(
        "HTTP URL",
        max_length=2048,
        blank=True,
        validators=[validate_http_url],
        help_text="http kind: a URL or an RFC 6570 template whose variables are arguments, e.g. "
        "https://api.example.com/pets/{id}{?limit}. Its host must be in REGISTRY_HTTP_ALLOWED_HOSTS.",
    )
    http_headers = models.JSONField(
        "HTTP headers",
        default=dict,
        blank=True,
        validators=[validate_http_headers],
        help_text='http kind: static headers, e.g. {"Accept-Language": "en"}.',
    )
    http_body_template = models.JSONField(
        "HTTP body template",
        null=True,
        blank=True,
        help_text="http kind: the JSON body, with {{ argument }} placeholders (a string that is only a "
        "placeholder keeps the type). Empty: POST, PUT and PATCH send the arguments the URL does "
        "not use; GET and DELETE send no body.",
    )
    http_result_pointer = models.CharField(
        "HTTP result pointer",
        max_length=512,
        blank=True,
        validators=[validate_result_pointer],
        help_text="http kind: the part of the JSON reply that becomes structuredContent, as a JSON "
        "Pointer (RFC 6901), e.g. /data. Empty: the whole reply.",
    )
    http_timeout = models.FloatField(
        "HTTP timeout (s)", default=10.0, validators=[MinValueValidator(0.1), MaxValueValidator(300.0)]
    )
    http_secret_header = models.CharField(
        max_length=128,
        blank=True,
        validators=[header_name],
        help_text="http kind: header that carries the secret, e.g. Authorization.",
    )
    http_secret_env = models.CharField(
        "HTTP secret environment variable",
        max_length=128,
        blank=True,
        validators=[env_var_name],
        help_text="http kind: the secret is read from this variable at call time.",
    )
    http_max_concurrency = models.PositiveIntegerField(
        "HTTP concurrency cap",
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(10_000)],
        help_text="http kind: at most this many calls of this tool at once per worker (more wait, within "
        "the timeout). Empty: no cap beyond the connections per host.",
    )
    http_signing_secret_env = models.CharField(
        "HTTP signing secret environment variable",
        max_length=128,
        blank=True,
        validators=[env_var_name],
        help_text="http kind: sign each request (X-MCP-Signature: HMAC-SHA256) with the secret in this "
        "variable, read at call time.",
    )
    # v1 (timestamp and body) stays for the rows made before v2 existed: their upstreams verify v1
    # (migration 0021 keeps them on it); new tools sign v2 (timestamp, method, URL, body digest).
    http_signing_scheme = models.CharField(
        "HTTP signature scheme",
        max_length=2,
        choices=[("v2", "v2: timestamp, method, URL, body digest"), ("v1", "v1: timestamp and body")],
        default="v2",
        help_text="http kind: what the signature covers; docs/guides/http-tools.md \"Signed calls\".",
    )
    http_forward_principal = models.BooleanField(
        "Forward the caller's principal",
        default=False,
        help_text="http kind: send the caller's principal id (never a token) as X-MCP-Principal.",
    )
    http_forward_trace = models.BooleanField(
        "Forward trace context",
        default=False,
        help_text="http kind: send the request's W3C traceparent/tracestate (from params._meta).",
    )
    # Issue 42 item 2: the user's own token at a provider (connections.Provider, by slug: the
    # registry sits below the connections app) as the bearer token; kinds/http_client/acting.py.
    http_connection = models.SlugField(
        "Call as the user through provider",
        max_length=64,
        blank=True,
        help_text="http kind: a provider's slug (Connected services). Each caller's own token at that "
        "provider is sent as Authorization: Bearer; a caller who has not connected is asked to.",
    )
    openapi_source = models.CharField(
        "OpenAPI source",
        max_length=128,
        blank=True,
        db_index=True,
        help_text="Set by import_openapi: the import that made this tool. Importing the same source "
        "again updates its tools and never touches tools made by hand or by another source.",
    )
    template_text = models.TextField(
        blank=True, help_text="template kind: text with {{ argument }} placeholders."
    )
    template_structured = models.JSONField(
        null=True,
        blank=True,
        help_text="template kind: structuredContent JSON with {{ argument }} "
        "placeholders (a string that is only a placeholder keeps the type).",
    )

    # The fields only one kind uses (``registry/kinds/``): the admin shows the chosen kind's, and
    # a save clears the others' (``clear_other_kinds``), so a tool switched from http to template
    # keeps no URL it no longer calls, in the admin and the API alike.
    KIND_FIELDS: ClassVar[dict[str, tuple[str, ...]]] = {
        "handler": ("handler",),
        "template": ("template_text", "template_structured"),
        "http": (
            "http_method", "http_url", "http_headers", "http_body_template", "http_result_pointer",
            "http_timeout", "http_max_concurrency", "http_secret_header", "http_secret_env",
            "http_signing_secret_env", "http_signing_scheme", "http_forward_principal", "http_forward_trace",
            "http_connection",
        ),
        # Mirrored from an upstream MCP server (upstreams.py): written by its sync, not a form.
        "upstream": (
            "upstream", "upstream_name", "upstream_definition", "upstream_overrides", "upstream_missing",
        ),
    }

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clear_other_kinds(self) -> list[str]:
        """Reset the fields of the kinds this tool is not to their defaults; the names reset."""
        cleared = []
        for kind, names in self.KIND_FIELDS.items():
            if kind == self.kind:
                continue
            for name in names:
                default = self._meta.get_field(name).get_default()
                if getattr(self, name) != default:
                    setattr(self, name, default)
                    cleared.append(name)
        return cleared

    @property
    def upstream_task_support(self) -> str:
        """A mirrored tool's task support at its upstream (issue 40 item 4): its listed
        ``execution.taskSupport``, honoured only where the upstream declared task-augmented
        ``tools/call`` (2025-11-25 basic/utilities/tasks.mdx "Tool-Level Negotiation": without
        ``tasks.requests.tools.call`` clients MUST NOT augment, whatever the tool says)."""
        if self.upstream_id is None:
            return str(self.TaskSupport.FORBIDDEN)
        info = self.upstream.server_info or {}
        caps = info.get("capabilities") if isinstance(info, dict) else None
        tasks = caps.get("tasks") if isinstance(caps, dict) else None
        requests = tasks.get("requests") if isinstance(tasks, dict) else None
        tools = requests.get("tools") if isinstance(requests, dict) else None
        listed = (self.execution or {}).get("taskSupport")
        if isinstance(tools, dict) and isinstance(tools.get("call"), dict) and listed in (
                self.TaskSupport.OPTIONAL, self.TaskSupport.REQUIRED):
            return str(listed)
        return str(self.TaskSupport.FORBIDDEN)

    @property
    def effective_task_support(self) -> str:
        """The task support served (``task_support``, else the kind's default; a mirrored tool's
        default is its upstream's: ``upstream_task_support``)."""
        if self.task_support:
            return str(self.task_support)
        if self.kind == self.Kind.UPSTREAM:
            return self.upstream_task_support
        default = self.TaskSupport.OPTIONAL if self.kind == self.Kind.HTTP else self.TaskSupport.FORBIDDEN
        return str(default)  # a TextChoices member's str() is its value

    @property
    def effective_approval(self) -> str:
        """The policy applied (``approval``, else the destructive default, else none). Only an
        explicit ``destructiveHint: true`` counts: the spec's default (true when not read-only) is
        a hint for clients, and would put every unannotated tool behind approval."""
        if self.approval:
            return str(self.approval)
        if (self.annotations or {}).get("destructiveHint") is True:
            from django.conf import settings

            return str(getattr(settings, "MCP_APPROVAL_DESTRUCTIVE_DEFAULT", "none"))
        return str(self.Approval.NONE)

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.kind in self.KIND_FIELDS:  # an unknown kind is the field's own error
            self.clear_other_kinds()
        if self.kind == self.Kind.HANDLER:
            check_handler(errors, "handler", "tool", self.handler, required=True)
        elif self.kind == self.Kind.HTTP:
            errors.update(http_tool_errors(self))
        elif self.kind == self.Kind.TEMPLATE:
            if not self.template_text.strip() and self.template_structured is None:
                errors["template_text"] = "A template tool needs a text template or a structured template."
            if self.output_schema and self.template_structured is None:
                errors["template_structured"] = (
                    "With an output schema the tool must return structured content."
                )
            for name in ("template_text", "template_structured"):
                problems = template_problems(getattr(self, name), input_properties(self.input_schema))
                if problems and name not in errors:
                    errors[name] = " ".join(problems)
        errors.update(apps_ui.tool_errors(self.ui_resource_uri, self.ui_visibility))
        if errors:
            raise ValidationError(errors)

