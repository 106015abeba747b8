"""``resources/list``, ``resources/read``, ``resources/templates/list``, ``resources/subscribe`` and
``resources/unsubscribe`` (server/resources.mdx).

Not found: the provider raises ``ResourceNotFound`` (-32002); ``server.py`` renumbers it to -32602
for 2026-07-28. Subscriptions are kept on the session (the transport persists it) and are accepted
for any syntactically valid URI, listed or template-generated: the spec asks for no existence check.
"""

from __future__ import annotations

from typing import Any

from .. import versions
from ..auth.scopes import granted_uri
from ..definitions import Resource, ResourceTemplate
from ..errors import InternalError, InvalidParams, ResourceNotFound
from ..uri import uri_problem
from .base import Call, require_str
from .listing import list_page


def _resource_key(resource: Resource) -> str:
    return resource.uri


def _template_key(template: ResourceTemplate) -> str:
    return template.uri_template


def _uri(call: Call) -> str:
    uri = require_str(call.params, "uri")
    # server/resources.mdx: servers MUST validate all resource URIs; custom schemes MUST follow
    # RFC 3986.
    problem = uri_problem(uri)
    if problem is not None:
        raise InvalidParams(f"Invalid resource URI {uri!r}: {problem}", {"uri": uri})
    return uri


async def list_resources(call: Call) -> dict[str, Any]:
    listed = call.snapshot.listed_resources
    return list_page(call, "resources", "resources", listed, _resource_key, versions.resource_to_wire)


async def list_resource_templates(call: Call) -> dict[str, Any]:
    return list_page(
        call,
        "resource_templates",
        "resourceTemplates",
        call.snapshot.resource_templates,
        _template_key,
        versions.template_to_wire,
    )


async def read_resource(call: Call) -> dict[str, Any]:
    uri = _uri(call)
    if not granted_uri(call.snapshot, call.full_snapshot, uri):
        raise ResourceNotFound(uri)  # what the provider raises for a URI it does not know
    if call.snapshot.skills:
        # SEP-2640 "Reading": skill files are plain resources, served from the snapshot.
        hit = call.snapshot.skill_index.file(uri)
        if hit is not None:
            return {"contents": [hit[1].contents(uri)]}
    contents = await call.server.provider.read_resource(uri, call.ctx)
    if not isinstance(contents, list):
        raise InternalError()
    if versions.has_resource_contents_meta(call.version):
        return {"contents": contents}
    return {"contents": [{k: v for k, v in c.items() if k != "_meta"} for c in contents]}


async def subscribe(call: Call) -> dict[str, Any]:
    uri = _uri(call)
    if not granted_uri(call.snapshot, call.full_snapshot, uri):
        # Accepted like any unknown URI (no existence check, no oracle), but never recorded: its
        # resources/updated would tell the caller that something outside its grant changed.
        return {}
    if uri not in call.session.subscriptions:
        call.session.subscriptions.add(uri)
        call.session.mark_dirty()
    return {}


async def unsubscribe(call: Call) -> dict[str, Any]:
    uri = _uri(call)
    if uri in call.session.subscriptions:
        call.session.subscriptions.discard(uri)
        call.session.mark_dirty()
    return {}
