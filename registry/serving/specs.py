"""The spec types the snapshot serves: for each definition, what to *do* when it is called or read
(tool kind and its settings, stored resource content, compiled URI templates, prompt messages and
completion values), and ``RegistryState``, those keyed beside the protocol's ``Snapshot``.

Built from the database by ``registry.snapshot`` and from code by ``registry.code.serving``; run by
``registry.kinds`` and the provider. Plain frozen data: this module reads nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mcp_protocol import definitions as d
from mcp_protocol.uri_template import ParsedTemplate

from .upstream import UpstreamTarget


@dataclass(frozen=True)
class ToolSpec:
    name: str
    kind: str
    handler: str = ""
    http_method: str = "POST"
    http_url: str = ""  # a URL or an RFC 6570 template of one (kinds/http_client/request.py)
    http_timeout: float = 10.0
    http_secret_header: str = ""
    http_secret_env: str = ""
    http_headers: tuple[tuple[str, str], ...] = ()
    http_body_template: Any = None
    http_result_pointer: str = ""
    http_signing_secret_env: str = ""
    http_signing_scheme: str = "v2"
    http_forward_principal: bool = False
    http_forward_trace: bool = False
    http_max_concurrency: int | None = None
    http_connection: str = ""  # a provider's slug: call as the user (kinds/http_client/acting.py)
    idempotent: bool = False  # retried on connection errors and 502/503/504 (annotations or GET)
    structured_output: bool = False  # the tool declares an outputSchema
    template_text: str = ""
    template_structured: Any = None
    # kind "upstream" (issue 40): which upstream and the tool's own name there (upstreams/serve.py).
    upstream: UpstreamTarget | None = None


@dataclass(frozen=True)
class ResourceSpec:
    uri: str
    kind: str
    mime_type: str | None
    text: str = ""
    blob: str = ""
    handler: str = ""
    meta: Mapping[str, Any] | None = None  # an app view's _meta.ui, on the read contents too
    upstream: UpstreamTarget | None = None  # kind "upstream": the upstream and the resource's URI there


@dataclass(frozen=True)
class TemplateSpec:
    definition: d.ResourceTemplate
    parsed: ParsedTemplate
    kind: str
    mime_type: str | None
    text_template: str = ""
    handler: str = ""
    completions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    completion_handler: str = ""
    upstream: UpstreamTarget | None = None  # kind "upstream": the upstream and its URI template there


@dataclass(frozen=True)
class PromptSpec:
    name: str
    description: str | None
    handler: str = ""
    code: bool = False  # defined in Python (registry.code), not in the database
    completion_handler: str = ""
    messages: tuple[tuple[str, Any], ...] = ()
    completions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    upstream: UpstreamTarget | None = None  # mirrored from an upstream: the prompt's name there


@dataclass(frozen=True)
class RegistryState:
    snapshot: d.Snapshot
    tools: Mapping[str, ToolSpec]
    resources: Mapping[str, ResourceSpec]
    templates: tuple[TemplateSpec, ...]
    prompts: Mapping[str, PromptSpec]

    def template(self, uri_template: str) -> TemplateSpec | None:
        for spec in self.templates:
            if spec.definition.uri_template == uri_template:
                return spec
        return None


EMPTY = RegistryState(
    d.Snapshot(version="empty"), MappingProxyType({}), MappingProxyType({}), (), MappingProxyType({})
)
