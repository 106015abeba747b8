"""Builds, from the database, the immutable view the provider serves without touching it again.

``build_state()`` runs a fixed handful of queries (one per model, prompts with their arguments and
messages prefetched, the enabled virtual servers as ``Snapshot.endpoints``) and returns a
``RegistryState``: the protocol's ``Snapshot`` (what clients list) plus, keyed the same way, what
to *do* for each definition (tool kind and its settings, stored resource content, compiled URI
templates, prompt messages and completion values). Calls then dispatch from this state alone.
The types are ``serving/specs.py``'s, so what serves them (``code/``, ``kinds/``) needs none of
this reader.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
from types import MappingProxyType
from typing import Any

from mcp_protocol import definitions as d
from mcp_protocol import features
from mcp_protocol import skills as sk
from mcp_protocol.endpoints import PIN
from mcp_protocol.uri_template import parse_template

from .serving.specs import PromptSpec, RegistryState, ResourceSpec, TemplateSpec, ToolSpec
from .serving.upstream import UpstreamConfig, UpstreamTarget
from .validation import apps_ui


def _icons(value: Any) -> tuple[dict[str, Any], ...] | None:
    return tuple(value) if value else None


def _size(row: Any) -> int | None:
    if row.size is not None:
        return int(row.size)
    if row.kind == "text":
        return len(row.text.encode("utf-8"))
    if row.kind == "binary":
        try:
            return len(base64.b64decode(row.blob))
        except (binascii.Error, ValueError):
            return None
    return None


def _execution(row: Any) -> dict[str, Any]:
    """``execution`` as served: the row's JSON with ``taskSupport`` from its task support field
    (the field wins: it is what the server acts on)."""
    return {**(row.execution or {}), "taskSupport": row.effective_task_support}


def _tool_meta(row: Any) -> dict[str, Any] | None:
    """``_meta`` as served: the row's, with ``ui`` (MCP Apps) when the tool links a view and the
    pin of tool search (``methods/tool_search.PIN``) when it is always loaded."""
    meta = dict(row.meta or {})
    if getattr(row, "ui_resource_uri", ""):
        meta.update(apps_ui.tool_ui_meta(row.ui_resource_uri, row.ui_visibility))
    if getattr(row, "always_load", False):
        meta[PIN] = True
    return meta or None


def _resource_meta(row: Any) -> dict[str, Any] | None:
    """``_meta`` as served: the row's, with ``ui`` (csp, permissions) for an app view."""
    if not apps_ui.is_app_mime(row.mime_type):
        return row.meta or None
    return {**(row.meta or {}), **apps_ui.resource_ui_meta(row.ui_csp or {}, row.ui_permissions or [])}


def _origin(row: Any) -> str | None:
    """The upstream a mirrored row comes from (its name, unique), None for our own rows: what the
    endpoint's capabilities follow (``mcp_protocol/features.py``)."""
    return row.upstream.name if getattr(row, "upstream_id", None) is not None else None


def sources(configs: dict[int, UpstreamConfig], rows: dict[int, Any]) -> dict[str, frozenset[str]]:
    """What each upstream with served rows declared it can do (its last handshake, recorded by the
    sync in ``server_info``), by name (issue 40 item 3)."""
    out = {}
    for upstream_id, config in configs.items():
        info = rows[upstream_id].server_info or {}
        capabilities = info.get("capabilities") if isinstance(info, dict) else None
        out[config.name] = features.declared(capabilities if isinstance(capabilities, dict) else {})
    return out


def tool_definition(row: Any, target: ToolSpec | None = None) -> d.Tool:
    """The tool as served; ``target``: what the provider runs it with (``tool_spec``)."""
    return d.Tool(
        name=row.name,
        input_schema=row.input_schema,
        description=row.description or None,
        title=row.title or None,
        output_schema=row.output_schema or None,
        annotations=row.annotations or None,
        icons=_icons(row.icons),
        meta=_tool_meta(row),
        execution=_execution(row),
        tags=tuple(row.tags or ()),
        target=target,
        approval=getattr(row, "effective_approval", "none"),
        origin=_origin(row),
    )


def resource_definition(row: Any) -> d.Resource:
    return d.Resource(
        uri=row.uri,
        name=row.name,
        title=row.title or None,
        description=row.description or None,
        mime_type=row.mime_type or None,
        size=_size(row),
        annotations=row.annotations or None,
        icons=_icons(row.icons),
        meta=_resource_meta(row),
        tags=tuple(row.tags or ()),
        origin=_origin(row),
    )


def template_definition(row: Any) -> d.ResourceTemplate:
    return d.ResourceTemplate(
        uri_template=row.uri_template,
        name=row.name,
        title=row.title or None,
        description=row.description or None,
        mime_type=row.mime_type or None,
        annotations=row.annotations or None,
        icons=_icons(row.icons),
        meta=row.meta or None,
        tags=tuple(row.tags or ()),
        origin=_origin(row),
    )


def prompt_definition(row: Any, arguments: list[Any]) -> d.Prompt:
    return d.Prompt(
        name=row.name,
        title=row.title or None,
        description=row.description or None,
        arguments=tuple(
            d.PromptArgument(
                name=a.name, title=a.title or None, description=a.description or None, required=a.required
            )
            for a in arguments
        ),
        icons=_icons(row.icons),
        meta=row.meta or None,
        tags=tuple(row.tags or ()),
        origin=_origin(row),
    )


def _target(row: Any, configs: dict[int, UpstreamConfig] | None = None,
            upstreams: dict[int, Any] | None = None) -> UpstreamTarget | None:
    """A mirrored row's upstream and original name (issue 40), one ``UpstreamConfig`` per upstream
    (``upstreams``: each one's row, for ``sources``)."""
    if getattr(row, "upstream_id", None) is None:
        return None
    configs = {} if configs is None else configs
    config = configs.get(row.upstream_id)
    if config is None:
        config = configs[row.upstream_id] = UpstreamConfig.of(row.upstream)
        if upstreams is not None:
            upstreams[row.upstream_id] = row.upstream
    return UpstreamTarget(config, row.upstream_name)


def _arguments(row: Any) -> list[Any]:
    """A prompt's arguments: its rows, or a mirrored prompt's as its upstream listed them."""
    if getattr(row, "upstream_id", None) is None:
        return list(row.arguments.all())
    listed = (row.upstream_definition or {}).get("arguments") or []
    return [d.PromptArgument(name=a["name"], title=a.get("title") or None,
                             description=a.get("description") or None, required=bool(a.get("required")))
            for a in listed if isinstance(a, dict) and isinstance(a.get("name"), str)]


def served(model: Any) -> Any:
    """A model's rows that are served: enabled, and, mirrored ones, still listed by an enabled
    upstream (``upstream_missing`` rows keep their bindings but are not served)."""
    return (model.objects.filter(enabled=True, upstream_missing=False)
            .exclude(upstream__enabled=False).select_related("upstream"))


def tool_spec(row: Any, configs: dict[int, UpstreamConfig] | None = None,
              upstreams: dict[int, Any] | None = None) -> ToolSpec:
    """What the server runs for a tool row (saved or, for the admin's "try it", not)."""
    return ToolSpec(
        name=row.name,
        kind=row.kind,
        handler=row.handler,
        http_method=row.http_method,
        http_url=row.http_url,
        http_timeout=row.http_timeout,
        http_secret_header=row.http_secret_header,
        http_secret_env=row.http_secret_env,
        http_headers=tuple((row.http_headers or {}).items()),
        http_body_template=row.http_body_template,
        http_result_pointer=row.http_result_pointer,
        http_signing_secret_env=row.http_signing_secret_env,
        http_signing_scheme=row.http_signing_scheme,
        http_connection=row.http_connection,
        http_forward_principal=row.http_forward_principal,
        http_forward_trace=row.http_forward_trace,
        http_max_concurrency=row.http_max_concurrency,
        idempotent=row.http_method == "GET" or bool((row.annotations or {}).get("idempotentHint")),
        structured_output=bool(row.output_schema),
        template_text=row.template_text,
        template_structured=row.template_structured,
        upstream=_tool_target(row, configs, upstreams),
    )


def _tool_target(row: Any, configs: dict[int, UpstreamConfig] | None,
                 upstreams: dict[int, Any] | None) -> UpstreamTarget | None:
    target = _target(row, configs, upstreams)
    if target is None:
        return None
    return dataclasses.replace(target, task_support=row.upstream_task_support)


def build_state() -> RegistryState:
    """Read every enabled definition (synchronous ORM; call off the event loop)."""
    from .code import definitions as code
    from .code.serving import add_code, clashes, code_versions
    from .models import Prompt, Resource, ResourceTemplate, Tool, VirtualServer

    configs: dict[int, UpstreamConfig] = {}
    upstreams: dict[int, Any] = {}  # the rows of ``configs``' upstreams
    tools: list[d.Tool] = []
    tool_specs: dict[str, ToolSpec] = {}
    tool_rows = list(served(Tool).order_by("name"))
    taken = clashes(code.TOOLS, [row.name for row in tool_rows], "Tool")
    for row in (row for row in tool_rows if row.name not in taken):
        spec = tool_specs[row.name] = tool_spec(row, configs, upstreams)
        tools.append(tool_definition(row, spec))

    resources: list[d.Resource] = []
    resource_specs: dict[str, ResourceSpec] = {}
    resource_rows = list(served(Resource).order_by("uri"))
    taken = clashes(code.RESOURCES, [row.uri for row in resource_rows], "Resource")
    for row in (row for row in resource_rows if row.uri not in taken):
        resources.append(resource_definition(row))
        resource_specs[row.uri] = ResourceSpec(
            uri=row.uri,
            kind=row.kind,
            mime_type=row.mime_type or None,
            text=row.text,
            blob=row.blob,
            handler=row.handler,
            meta=_resource_meta(row) if apps_ui.is_app_mime(row.mime_type) else None,
            upstream=_target(row, configs, upstreams),
        )

    templates: list[TemplateSpec] = []
    template_rows = list(served(ResourceTemplate).order_by("name"))
    taken = clashes(code.TEMPLATES, [row.uri_template for row in template_rows], "Resource template")
    for row in (row for row in template_rows if row.uri_template not in taken):
        definition = template_definition(row)
        templates.append(
            TemplateSpec(
                definition=definition,
                parsed=parse_template(row.uri_template),
                kind=row.kind,
                mime_type=row.mime_type or None,
                text_template=row.text_template,
                handler=row.handler,
                completions=MappingProxyType({k: tuple(v) for k, v in (row.completions or {}).items()}),
                completion_handler=row.completion_handler,
                upstream=_target(row, configs, upstreams),
            )
        )

    prompts: list[d.Prompt] = []
    prompt_specs: dict[str, PromptSpec] = {}
    prompt_rows = list(served(Prompt).order_by("name").prefetch_related("arguments", "messages"))
    taken = clashes(code.PROMPTS, [row.name for row in prompt_rows], "Prompt")
    for row in (row for row in prompt_rows if row.name not in taken):
        arguments = _arguments(row)
        prompts.append(prompt_definition(row, arguments))
        prompt_specs[row.name] = PromptSpec(
            name=row.name,
            description=row.description or None,
            handler=row.handler,
            completion_handler=row.completion_handler,
            messages=tuple((m.role, m.content) for m in row.messages.all()),
            completions=MappingProxyType({a.name: tuple(getattr(a, "completion_values", None) or ())
                                          for a in arguments}),
            upstream=_target(row, configs, upstreams),
        )

    add_code(tools, tool_specs, resources, resource_specs, templates, prompts, prompt_specs)
    skills = build_skills()
    declared = sources(configs, upstreams)
    # The virtual servers (issue 39), enabled ones only: one query. Not in ``version`` below: a
    # server's lists are named by its selection (``endpoint_views.select``), and an edit of one
    # server must not drop the wire cache and the cursors of every other endpoint.
    servers = VirtualServer.objects.filter(enabled=True).order_by("slug")
    endpoints = tuple(row.endpoint_spec() for row in servers)
    body = (
        code_versions(),
        tools,
        tool_specs,
        resources,
        resource_specs,
        [
            (t.definition, t.kind, t.text_template, t.handler, dict(t.completions), t.completion_handler,
             t.upstream)
            for t in templates
        ],
        prompts,
        {
            k: (v.handler, v.completion_handler, v.messages, dict(v.completions), v.upstream)
            for k, v in prompt_specs.items()
        },
        [(s.path, s.frontmatter, s.tags, [(f.path, f.mime_type, f.digest) for f in s.files]) for s in skills],
        sorted((name, sorted(flags)) for name, flags in declared.items()),
    )
    version = hashlib.sha256(repr(body).encode("utf-8")).hexdigest()[:16]
    snapshot = d.Snapshot(
        version=version,
        tools=tuple(tools),
        resources=tuple(resources),
        resource_templates=tuple(t.definition for t in templates),
        prompts=tuple(prompts),
        skills=skills,
        endpoints=endpoints,
        sources=declared,
    )
    return RegistryState(
        snapshot=snapshot,
        tools=MappingProxyType(tool_specs),
        resources=MappingProxyType(resource_specs),
        templates=tuple(templates),
        prompts=MappingProxyType(prompt_specs),
    )


def build_skills() -> tuple[sk.Skill, ...]:
    """Every enabled skill with its files (two queries), nested skills' files added (SEP-2640)."""
    from .models import Skill

    out = []
    for row in Skill.objects.filter(enabled=True).order_by("path").prefetch_related("files"):
        files = [sk.SkillFile(sk.SKILL_MD, sk.MARKDOWN_MIME, text=row.skill_md)]
        for f in row.files.all():
            if f.is_binary:
                files.append(sk.SkillFile(f.path, f.media_type, data=bytes(f.data or b"")))
            else:
                files.append(sk.SkillFile(f.path, f.media_type, text=f.text))
        out.append(sk.Skill(row.path, dict(row.frontmatter), tuple(files), tuple(row.tags or ())))
    return sk.with_nested(out)
