"""One OpenAPI operation as the fields of one ``http`` tool, or the reason it cannot be one.

- name: the ``operationId`` (characters outside ``[A-Za-z0-9_.-]`` become ``_``), else
  ``<method>_<path>``; an optional prefix keeps two APIs apart (``petstore.getPetById``).
- URL: the server URL (``servers[0]``, its variables at their defaults, or the importer's base
  URL) + the path, whose ``{param}`` is already RFC 6570 simple expansion, + ``{?a,b*}`` for the
  query parameters (``*``: an exploded array or object, the default ``form`` style).
- ``inputSchema``: the path and query parameters, and the JSON request body: its properties merged
  in when it is an object whose names do not clash (the kind sends the arguments the URL did not
  use as the body), else one ``body`` argument sent whole (``http_body_template: "{{ body }}"``).
- ``outputSchema``: the JSON schema of the first 2xx response; one that is not an object (however
  composed: ``allOf``/``anyOf``/``oneOf`` of objects are objects) is wrapped as ``{"result": ...}``,
  as the kind wraps such a reply.
- annotations from the method (server/tools.mdx ToolAnnotations): GET read-only and idempotent,
  PUT idempotent, DELETE destructive and idempotent, POST and PATCH neither; every imported tool
  talks to the world outside (``openWorldHint``).

Not importable, with the reason said: a required header or cookie parameter (a tool has no place
for it), a parameter name RFC 6570 cannot name, a required body that is not JSON, a GET with a
body, a missing server URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .document import resolve, to_json_schema

METHODS = ("get", "post", "put", "patch", "delete")
_VARNAME_RE = re.compile(r"^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$")  # RFC 6570 §2.3 without %XX
_WRITE = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": True}
ANNOTATIONS = {
    "GET": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": True},
    "PUT": {**_WRITE, "idempotentHint": True},
    "DELETE": {**_WRITE, "destructiveHint": True, "idempotentHint": True},
    "POST": _WRITE,
    "PATCH": _WRITE,
}


class NotImportable(ValueError):
    pass


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    path: str
    spec: dict[str, Any]  # resolved
    tags: tuple[str, ...]


def tool_name(operation: Operation, prefix: str) -> str:
    base = operation.spec.get("operationId") or f"{operation.method.lower()}_{operation.path.strip('/')}"
    return (prefix + re.sub(r"[^A-Za-z0-9_.-]", "_", str(base)))[:128]


def server_url(document: dict[str, Any], base_url: str) -> str:
    if base_url:
        return base_url.rstrip("/")
    servers = document.get("servers") or [{"url": "/"}]
    server = servers[0]
    url = str(server.get("url", "/"))
    for name, variable in (server.get("variables") or {}).items():
        url = url.replace("{" + name + "}", str(variable.get("default", "")))
    if not re.match(r"^https?://", url):
        raise NotImportable(f"the document's server URL {url!r} is not absolute: give a base URL")
    return url.rstrip("/")


def _json_content(content: dict[str, Any] | None) -> dict[str, Any] | None:
    for media_type, item in (content or {}).items():
        kind = media_type.split(";")[0].strip().lower()
        if kind == "application/json" or kind.endswith("+json"):
            return item if isinstance(item, dict) else {}
    return None


def _is_object(schema: Any) -> bool:
    """Whether every value ``schema`` accepts is a JSON object, however it is composed: an
    ``allOf`` with one object branch, an ``anyOf``/``oneOf`` whose branches all are. The kind
    passes an object reply through as is and wraps anything else (``kinds/http_client/reply.py``), so the
    ``outputSchema`` must make the same call (issue 37: an ``allOf`` of objects was wrapped as
    ``{"result": ...}`` and every call then failed its own schema)."""
    if not isinstance(schema, dict):
        return False
    if schema.get("type") == "object" or ("properties" in schema and "type" not in schema):
        return True
    if "type" in schema:
        return False
    if any(_is_object(branch) for branch in schema.get("allOf") or ()):
        return True
    return any(
        isinstance(branches := schema.get(union), list) and branches and all(_is_object(b) for b in branches)
        for union in ("anyOf", "oneOf")
    )


def _parameters(
    document: dict[str, Any], path_item: dict[str, Any], spec: dict[str, Any]
) -> list[dict[str, Any]]:
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for param in [*(path_item.get("parameters") or []), *(spec.get("parameters") or [])]:
        param = resolve(param, document)
        merged[(param.get("name", ""), param.get("in", ""))] = param
    return list(merged.values())


def operations(document: dict[str, Any]) -> list[Operation]:
    found = []
    for path, path_item in (document.get("paths") or {}).items():
        path_item = resolve(path_item, document)
        for method in METHODS:
            spec = path_item.get(method)
            if isinstance(spec, dict):
                spec = {**spec, "parameters": _parameters(document, path_item, spec)}
                found.append(Operation(method.upper(), path, spec, tuple(spec.get("tags") or ())))
    return found


def tool_fields(
    document: dict[str, Any], openapi: str, operation: Operation, base_url: str
) -> dict[str, Any]:
    """The Tool fields this operation becomes (``NotImportable`` if it cannot)."""
    spec = operation.spec
    properties: dict[str, Any] = {}
    required: list[str] = []
    query: list[str] = []
    for param in spec["parameters"]:
        name, where = str(param.get("name", "")), param.get("in")
        if where in ("header", "cookie"):
            if param.get("required"):
                raise NotImportable(f"it needs the {where} parameter {name!r}")
            continue
        if not _VARNAME_RE.fullmatch(name):
            raise NotImportable(f"parameter {name!r} is not a name a URL template can hold")
        schema = to_json_schema(param.get("schema") or {}, openapi)
        if param.get("description") and isinstance(schema, dict):
            schema = {**schema, "description": param["description"]}
        properties[name] = schema
        if param.get("required") or where == "path":
            required.append(name)
        if where == "query":
            explode = param.get("explode", param.get("style", "form") == "form")
            kind = schema.get("type") if isinstance(schema, dict) else None
            query.append(name + ("*" if explode and kind in ("array", "object") else ""))
    url = server_url(document, base_url) + operation.path + (f"{{?{','.join(query)}}}" if query else "")
    fields: dict[str, Any] = {"http_method": operation.method, "http_url": url, "http_body_template": None}
    body = spec.get("requestBody")
    if body:
        media = _json_content(body.get("content"))
        if media is None:
            if body.get("required"):
                raise NotImportable("its request body is not JSON")
        elif operation.method == "GET":
            raise NotImportable("it is a GET with a request body")
        else:
            schema = to_json_schema(media.get("schema") or {}, openapi)
            names = set((schema.get("properties") or {}) if isinstance(schema, dict) else ())
            if isinstance(schema, dict) and _is_object(schema) and names and not names & set(properties) \
                    and operation.method != "DELETE":
                properties.update(schema["properties"])
                if body.get("required"):
                    required.extend(n for n in schema.get("required") or () if n in names)
            else:
                properties["body"] = schema
                fields["http_body_template"] = "{{ body }}"
                if body.get("required"):
                    required.append("body")
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = sorted(set(required), key=required.index)
    summary = str(spec.get("summary") or "").strip()
    description = str(spec.get("description") or "").strip()
    return {
        **fields,
        "title": summary[:255],
        "description": description or summary,
        "input_schema": input_schema,
        "output_schema": output_schema(spec, openapi),
        "annotations": {**ANNOTATIONS[operation.method], **({"title": summary[:255]} if summary else {})},
    }


def output_schema(spec: dict[str, Any], openapi: str) -> dict[str, Any] | None:
    responses = spec.get("responses") or {}
    for code in sorted(str(c) for c in responses):
        if not code.startswith("2"):
            continue
        media = _json_content((responses[code] or {}).get("content"))
        schema = to_json_schema((media or {}).get("schema"), openapi)
        if not isinstance(schema, dict) or not schema:
            return None
        if _is_object(schema):
            return {**schema, "type": "object"}
        return {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    return None


def credential_note(document: dict[str, Any]) -> str:
    """What credentials the document's security schemes ask for, and how to give an imported tool
    one (``--secret-header``/``--secret-env``); "" when it declares none."""
    schemes = (document.get("components") or {}).get("securitySchemes") or {}
    said = []
    for name, scheme in schemes.items():
        scheme = resolve(scheme, document)
        kind, http_scheme = scheme.get("type"), str(scheme.get("scheme", "")).lower()
        if kind == "apiKey" and scheme.get("in") == "header":
            header = scheme.get("name")
            said.append(f"{name}: an API key in header {header!r} (--secret-header {header})")
        elif kind == "http" and http_scheme in ("bearer", "basic"):
            said.append(f"{name}: HTTP {http_scheme.capitalize()} (--secret-header Authorization, the "
                        f"variable holding '{http_scheme.capitalize()} ...')")
        else:
            said.append(f"{name}: {kind}{' in ' + str(scheme.get('in')) if scheme.get('in') else ''} "
                        "(not sent by http tools: give a header credential if the API accepts one)")
    return "; ".join(said)
