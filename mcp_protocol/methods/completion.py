"""``completion/complete`` (server/utilities/completion.mdx): at most 100 values per response.

``context.arguments`` is read only from 2025-06-18 on, where it exists. A provider returning more
than 100 values is trimmed here and the response says ``hasMore`` (and keeps an honest ``total``).
"""

from __future__ import annotations

from typing import Any

from .. import versions
from ..auth.scopes import granted_uri
from ..definitions import Snapshot
from ..errors import InvalidParams
from .base import Call, optional_object, require_str

MAX_VALUES = 100


def _outside_grant(view: Snapshot, full: Snapshot, uri: str) -> bool:
    """A ``ref/resource`` the caller may not see though it exists: a template outside its grant,
    or a URI whose serving template (``uri_template``'s rule, as for ``resources/read``) is."""
    if full.resource_template(uri) is not None:
        return view.resource_template(uri) is None
    exists = full.resource(uri) is not None or full.serving_template(uri) is not None
    return exists and not granted_uri(view, full, uri)


async def complete(call: Call) -> dict[str, Any]:
    ref = optional_object(call.params, "ref")
    kind = ref.get("type")
    if kind == "ref/prompt":
        name = require_str(ref, "name")
        if call.snapshot.prompt(name) is None and call.full_snapshot.prompt(name) is not None:
            # Outside the caller's grant: the provider's own answer for an unknown prompt.
            raise InvalidParams(f"Unknown prompt: {name}", {"ref": dict(ref)})
    elif kind == "ref/resource":
        uri = require_str(ref, "uri")
        if _outside_grant(call.snapshot, call.full_snapshot, uri):
            raise InvalidParams(f"Unknown resource template: {uri}", {"ref": dict(ref)})
    else:
        raise InvalidParams("params.ref.type must be 'ref/prompt' or 'ref/resource'")
    argument = optional_object(call.params, "argument")
    name = require_str(argument, "name")
    value = require_str(argument, "value")
    context_arguments: dict[str, str] = {}
    if versions.has_completion_context(call.version):
        raw = optional_object(optional_object(call.params, "context"), "arguments")
        context_arguments = {k: v for k, v in raw.items() if isinstance(v, str)}
    completion = await call.server.provider.complete(ref, name, value, context_arguments)
    values = list(completion.values)
    total = completion.total
    has_more = completion.has_more
    if len(values) > MAX_VALUES:
        total = max(total or 0, len(values))
        values = values[:MAX_VALUES]
        has_more = True
    body: dict[str, Any] = {"values": values}
    if total is not None:
        body["total"] = total
    body["hasMore"] = has_more
    return {"completion": body}
