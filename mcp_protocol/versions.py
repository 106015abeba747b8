"""Protocol revisions: which are supported, negotiation, and every per-revision difference.

Every "field X exists only from revision Y" rule lives here, so the rest of the core produces one
rich shape and asks this module to fit it to the session's revision. Sources: each revision's
``schema/<v>/schema.ts`` and ``changelog.mdx`` (see /work/shared/spec/checklist.md §1, §3).

Content blocks a revision cannot carry are *degraded*, not dropped, so a client never loses the
fact that something was there: ``audio`` before 2025-03-26 and ``resource_link`` before 2025-06-18
become a ``text`` block naming what was omitted. Unknown block types pass through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .definitions import Prompt, PromptArgument, Resource, ResourceTemplate, Tool
from .errors import INVALID_PARAMS, RESOURCE_NOT_FOUND

V2024_11_05 = "2024-11-05"
V2025_03_26 = "2025-03-26"
V2025_06_18 = "2025-06-18"
V2025_11_25 = "2025-11-25"
V2026_07_28 = "2026-07-28"

#: Oldest first; comparisons below use this order.
ORDER: tuple[str, ...] = (V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28)
SUPPORTED_VERSIONS: frozenset[str] = frozenset(ORDER)
#: Handshake-based revisions (2026-07-28 basic/versioning.mdx "Legacy").
LEGACY_VERSIONS: tuple[str, ...] = (V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25)
#: Per-request ``_meta`` revisions ("Modern").
MODERN_VERSIONS: tuple[str, ...] = (V2026_07_28,)
LATEST_LEGACY = V2025_11_25
LATEST = V2026_07_28
#: Newest first, as ``server/discover`` and the -32022 error data list them.
SUPPORTED_NEWEST_FIRST: tuple[str, ...] = tuple(reversed(ORDER))

_RANK = {v: i for i, v in enumerate(ORDER)}


def _at_least(version: str | None, minimum: str) -> bool:
    # An unknown/absent version is treated as the oldest: send the least.
    return _RANK.get(version or "", 0) >= _RANK[minimum]


def negotiate(requested: str) -> str:
    """[L] basic/lifecycle.mdx "Version Negotiation": echo a supported version, else our latest.

    ``initialize`` only negotiates legacy revisions; a client asking for a modern one through a
    handshake gets the latest legacy revision.
    """
    return requested if requested in LEGACY_VERSIONS else LATEST_LEGACY


def is_modern(version: str | None) -> bool:
    return version in MODERN_VERSIONS


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def names_modern_era(version: str | None) -> bool:
    """Does a version string belong to the modern era (2026-07-28 *or later*, served or not)?

    2026-07-28 basic/versioning.mdx: revisions are dates, and every one from 2026-07-28 on is
    "Modern". A later revision we do not serve is still a modern request, answered -32022 with
    the versions we support rather than treated as a legacy message without a session.
    """
    if version is None:
        return False
    return version in MODERN_VERSIONS or (bool(_DATE.fullmatch(version)) and version > LATEST_LEGACY)


def allows_batch(version: str | None) -> bool:
    """JSON-RPC batches exist only in 2025-03-26 (added there, removed in 2025-06-18)."""
    return version == V2025_03_26


def sends_priming_event(version: str | None) -> bool:
    """SEP-1699 priming event (id + empty data) from 2025-11-25 on; older clients choke on it."""
    return _at_least(version, V2025_11_25)


def input_validation_is_tool_error(version: str | None) -> bool:
    """SEP-1303 (2025-11-25 server/tools.mdx): argument validation failures are ``isError`` results."""
    return _at_least(version, V2025_11_25)


def resource_not_found_code(version: str | None) -> int:
    """-32002 through 2025-11-25; 2026-07-28 server/resources.mdx makes it -32602 (MUST)."""
    return INVALID_PARAMS if is_modern(version) else RESOURCE_NOT_FOUND


def has_structured_output(version: str | None) -> bool:
    """``outputSchema`` / ``structuredContent`` are [06+]."""
    return _at_least(version, V2025_06_18)


def has_progress_message(version: str | None) -> bool:
    """``ProgressNotification.params.message`` is [03+] (2025-03-26 changelog)."""
    return _at_least(version, V2025_03_26)


def has_resource_contents_meta(version: str | None) -> bool:
    """``_meta`` on ``TextResourceContents`` / ``BlobResourceContents`` is [06+]: the 2025-03-26
    schema's ``ResourceContents`` has only ``uri`` and ``mimeType``; 2025-06-18 schema.ts adds it."""
    return _at_least(version, V2025_06_18)


def structured_content_is_object(version: str | None) -> bool:
    """[06][11] schema.ts: ``CallToolResult.structuredContent`` is ``{ [key: string]: unknown }``
    (and ``outputSchema`` is ``type: "object"``); 2026-07-28 (SEP-2106) allows any JSON value."""
    return has_structured_output(version) and not is_modern(version)


def has_completion_context(version: str | None) -> bool:
    """``CompleteRequest.params.context.arguments`` is [06+]."""
    return _at_least(version, V2025_06_18)


# -- wire shaping ----------------------------------------------------------------------------------
def _common(out: dict[str, Any], title: str | None, icons: Any, meta: Any, version: str) -> None:
    if title is not None and _at_least(version, V2025_06_18):
        out["title"] = title
    if icons is not None and _at_least(version, V2025_11_25):
        out["icons"] = [dict(icon) for icon in icons]
    if meta is not None and _at_least(version, V2025_06_18):
        out["_meta"] = dict(meta)


def annotations_to_wire(annotations: Mapping[str, Any], version: str) -> dict[str, Any]:
    """``lastModified`` is [06+]; ``audience``/``priority`` exist in every revision."""
    out = dict(annotations)
    if not _at_least(version, V2025_06_18):
        out.pop("lastModified", None)
    return out


def tool_to_wire(tool: Tool, version: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        out["description"] = tool.description
    out["inputSchema"] = dict(tool.input_schema)
    if tool.output_schema is not None and has_structured_output(version):
        out["outputSchema"] = dict(tool.output_schema)
    if tool.annotations is not None and _at_least(version, V2025_03_26):  # tool annotations [03+]
        out["annotations"] = dict(tool.annotations)
    # Tool.execution (taskSupport) is 2025-11-25's; 2026-07-28 moved tasks to the extension
    # io.modelcontextprotocol/tasks, whose clients read the same hint (its Tool allows members
    # beyond the listed ones). Older revisions have no tasks.
    if tool.execution is not None and _at_least(version, V2025_11_25):
        out["execution"] = dict(tool.execution)
    _common(out, tool.title, tool.icons, tool.meta, version)
    return out


def resource_to_wire(resource: Resource, version: str) -> dict[str, Any]:
    out: dict[str, Any] = {"uri": resource.uri, "name": resource.name}
    if resource.description is not None:
        out["description"] = resource.description
    if resource.mime_type is not None:
        out["mimeType"] = resource.mime_type
    if resource.size is not None:
        out["size"] = resource.size
    if resource.annotations is not None:
        out["annotations"] = annotations_to_wire(resource.annotations, version)
    _common(out, resource.title, resource.icons, resource.meta, version)
    return out


def template_to_wire(template: ResourceTemplate, version: str) -> dict[str, Any]:
    out: dict[str, Any] = {"uriTemplate": template.uri_template, "name": template.name}
    if template.description is not None:
        out["description"] = template.description
    if template.mime_type is not None:
        out["mimeType"] = template.mime_type
    if template.annotations is not None:
        out["annotations"] = annotations_to_wire(template.annotations, version)
    _common(out, template.title, template.icons, template.meta, version)
    return out


def _argument_to_wire(argument: PromptArgument, version: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": argument.name}
    if argument.description is not None:
        out["description"] = argument.description
    if argument.required:
        out["required"] = True
    if argument.title is not None and _at_least(version, V2025_06_18):
        out["title"] = argument.title
    return out


def prompt_to_wire(prompt: Prompt, version: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": prompt.name}
    if prompt.description is not None:
        out["description"] = prompt.description
    if prompt.arguments:
        out["arguments"] = [_argument_to_wire(a, version) for a in prompt.arguments]
    _common(out, prompt.title, prompt.icons, prompt.meta, version)
    return out


def implementation_to_wire(
    name: str,
    server_version: str,
    title: str | None,
    version: str,
    description: str | None = None,
    *,
    icons: Sequence[Mapping[str, Any]] | None = None,
    website_url: str | None = None,
) -> dict[str, Any]:
    """``serverInfo``: ``title`` [06+]; ``description``, ``icons`` and ``websiteUrl`` [11+]
    (2025-11-25 changelog: ``Implementation`` gains them)."""
    out: dict[str, Any] = {"name": name, "version": server_version}
    if title is not None and _at_least(version, V2025_06_18):
        out["title"] = title
    if _at_least(version, V2025_11_25):
        if description is not None:
            out["description"] = description
        if icons:
            out["icons"] = [dict(icon) for icon in icons]
        if website_url is not None:
            out["websiteUrl"] = website_url
    return out


def _degraded(kind: str, detail: str) -> dict[str, Any]:
    return {
        "type": "text",
        "text": f"[{kind} omitted: not supported by this protocol version] {detail}".rstrip(),
    }


def content_to_wire(block: Mapping[str, Any], version: str) -> dict[str, Any]:
    """Fit one content block to ``version`` (see the module docstring for the degradation rule)."""
    kind = block.get("type")
    if kind == "audio" and not _at_least(version, V2025_03_26):  # AudioContent is [03+]
        return _degraded("audio", str(block.get("mimeType") or ""))
    if kind == "resource_link" and not _at_least(version, V2025_06_18):  # ResourceLink is [06+]
        return _degraded("resource link", str(block.get("uri") or ""))
    if _at_least(version, V2025_06_18) and "annotations" not in block:
        return dict(block)
    out = dict(block)
    if not _at_least(version, V2025_06_18):
        out.pop("_meta", None)  # _meta on content blocks is [06+]
    if (
        kind == "resource"
        and not has_resource_contents_meta(version)
        and isinstance(out.get("resource"), Mapping)
    ):
        inner = dict(out["resource"])
        inner.pop("_meta", None)
        out["resource"] = inner
    if isinstance(out.get("annotations"), Mapping):
        out["annotations"] = annotations_to_wire(out["annotations"], version)
    return out


def contents_to_wire(blocks: Any, version: str) -> list[dict[str, Any]]:
    return [content_to_wire(b, version) if isinstance(b, Mapping) else b for b in blocks or ()]


def capabilities_to_wire(
    *,
    version: str,
    tools: bool,
    resources: bool,
    resources_subscribe: bool,
    prompts: bool,
    completions: bool,
    logging: bool,
    list_changed: bool,
) -> dict[str, Any]:
    """ServerCapabilities for ``version``: ``completions`` is [03+] (2024-11-05 had no such key).
    ``listChanged`` / ``subscribe`` are delivered in every revision: legacy on the session (GET
    stream, stdout), 2026-07-28 on ``subscriptions/listen`` streams (methods/subscriptions.py)."""
    caps: dict[str, Any] = {}
    if logging:
        caps["logging"] = {}
    if completions and _at_least(version, V2025_03_26):
        caps["completions"] = {}
    if prompts:
        caps["prompts"] = {"listChanged": list_changed}
    if resources:
        caps["resources"] = {"subscribe": resources_subscribe, "listChanged": list_changed}
    if tools:
        caps["tools"] = {"listChanged": list_changed}
    return caps
