"""``resources/list``, ``resources/read``, ``resources/templates/list``, ``resources/subscribe`` and
``resources/unsubscribe`` (server/resources.mdx).

Not found: the provider raises ``ResourceNotFound`` (-32002); ``server.py`` renumbers it to -32602
for 2026-07-28. Subscriptions are kept on the session (the transport persists it) and are accepted
for any syntactically valid URI, listed or template-generated: the spec asks for no existence check.
"""

from __future__ import annotations

import re
from typing import Any

from .. import versions
from ..definitions import Resource, ResourceTemplate
from ..errors import InternalError, InvalidParams
from .base import Call, require_str
from .listing import list_page


def _resource_key(resource: Resource) -> str:
    return resource.uri


def _template_key(template: ResourceTemplate) -> str:
    return template.uri_template


# RFC 3986 §3 "URI = scheme ":" hier-part [ "?" query ] [ "#" fragment ]", split as in its
# Appendix B, with each part held to its own character set (§2: unreserved, sub-delims,
# pct-encoded). Nothing outside printable ASCII is allowed: spaces, controls and non-ASCII text
# must be percent-encoded (RFC 3986 is not RFC 3987 IRIs; the schema says ``@format uri``).
_PCT = r"%[0-9A-Fa-f]{2}"
_UNRESERVED_SUB = r"A-Za-z0-9\-._~!$&'()*+,;="
_PCHAR = rf"(?:[{_UNRESERVED_SUB}:@]|{_PCT})"
_URI = re.compile(
    rf"""
    [A-Za-z][A-Za-z0-9+.\-]*:                                    # scheme
    (?:
        //(?:(?:[{_UNRESERVED_SUB}:]|{_PCT})*@)?                  # authority: userinfo
        (?:\[[0-9A-Fa-f:.vV{_UNRESERVED_SUB}]+\]|(?:[{_UNRESERVED_SUB}]|{_PCT})*)  # host
        (?::[0-9]*)?                                             # port
        (?:/{_PCHAR}*)*                                          # path-abempty
      | (?!//)(?:{_PCHAR}|/)*                                    # path without authority
    )
    (?:\?(?:{_PCHAR}|[/?])*)?                                    # query
    (?:\#(?:{_PCHAR}|[/?])*)?                                    # fragment
    """,
    re.VERBOSE,
)


def _uri_problem(uri: str) -> str | None:
    if not uri:
        return "it is empty"
    bad = next((c for c in uri if not (0x21 <= ord(c) <= 0x7E)), None)
    if bad is not None:
        return f"character {bad!r} must be percent-encoded"
    if not re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", uri):
        return 'it has no scheme (RFC 3986 §3.1: scheme ":" …)'
    if _URI.fullmatch(uri) is None:
        return "it is not an RFC 3986 URI (a reserved character in the wrong place or a bad %-escape)"
    return None


def _uri(call: Call) -> str:
    uri = require_str(call.params, "uri")
    # server/resources.mdx: servers MUST validate all resource URIs; custom schemes MUST follow
    # RFC 3986.
    problem = _uri_problem(uri)
    if problem is not None:
        raise InvalidParams(f"Invalid resource URI {uri!r}: {problem}", {"uri": uri})
    return uri


async def list_resources(call: Call) -> dict[str, Any]:
    return list_page(
        call, "resources", "resources", call.snapshot.resources, _resource_key, versions.resource_to_wire
    )


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
    contents = await call.server.provider.read_resource(uri, call.ctx)
    if not isinstance(contents, list):
        raise InternalError()
    if versions.has_resource_contents_meta(call.version):
        return {"contents": contents}
    return {"contents": [{k: v for k, v in c.items() if k != "_meta"} for c in contents]}


async def subscribe(call: Call) -> dict[str, Any]:
    uri = _uri(call)
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
