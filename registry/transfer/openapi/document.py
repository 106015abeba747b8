"""An OpenAPI document: read, validated, its local ``$ref``s resolved, its schemas made JSON Schema.

- ``load``: JSON or YAML text (``safe_yaml.load``: no tags that build objects, no aliases).
- ``check``: OpenAPI 3.0.x or 3.1.x, valid per openapi-spec-validator (the project's pinned
  validator, the reference implementation's schema for each version); ``InvalidDocument`` says
  what is wrong and where. Before validation, every ``$ref`` that is not ``#...`` is refused
  (``remote_ref``), and the validator runs with a resolver that retrieves nothing
  (``NoRetrieval``): its default one follows ``file:``, ``http:`` and ``https:`` references, so a
  document could read the server's files into the error or make it GET any address (issue 37).
- ``resolve``: inlines ``#/...`` references (RFC 6901 pointers into the same document). A reference
  that leads back into itself (a tree of nodes, a linked list) is cut there and replaced by ``{}``
  (any value): a tool's schema describes arguments, not a recursive type. Remote references are
  not fetched (``InvalidDocument``): an import reads one document and nothing else. What one
  ``resolve`` produces is bounded (``MAX_NODES``): local references can nest into a bomb too.
- ``to_json_schema``: OpenAPI 3.0's schema dialect into JSON Schema 2020-12 (what tool schemas
  are, basic/index.mdx "JSON Schema Usage"): ``nullable: true`` becomes a ``"null"`` type, boolean
  ``exclusiveMinimum``/``exclusiveMaximum`` become numbers. 3.1 schemas already are 2020-12, but
  generators still write ``nullable`` in them (drf-spectacular does, in mcpsite's own schema),
  and a 2020-12 validator ignores it: a reply's ``null`` would then fail the tool's
  ``outputSchema``. So ``nullable: true`` is honoured in both versions (it only widens). Likewise
  ``oneOf: [{}, {"type": "null"}]`` (drf-spectacular's "any JSON, or null") would refuse ``null``,
  which matches both branches: a ``oneOf``/``anyOf`` with an empty (match-anything) branch
  becomes ``{}``, what its author meant.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema_path import SchemaPath
from openapi_spec_validator.shortcuts import get_validator_cls
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

from ...validation import safe_yaml

SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
MAX_DEPTH = 40  # inlined schemas nest at most this deep (tool schemas allow 64 levels)
MAX_NODES = 200_000  # nodes one resolve may produce (a path item of a large real API: a few thousand)


class InvalidDocument(ValueError):
    pass


def load(text: str | bytes) -> dict[str, Any]:
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig")
    try:
        document = json.loads(text) if text.lstrip().startswith("{") else safe_yaml.load(text)
    except (ValueError, safe_yaml.YAMLError) as exc:
        raise InvalidDocument(f"not JSON or YAML: {exc}") from None
    if not isinstance(document, dict):
        raise InvalidDocument("an OpenAPI document is a JSON object")
    return document


def version(document: dict[str, Any]) -> str:
    found = str(document.get("openapi", ""))
    if not (found.startswith("3.0.") or found.startswith("3.1.")):
        raise InvalidDocument(f"OpenAPI 3.0 or 3.1 only, not {found or document.get('swagger', 'unknown')!r}")
    return found


REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


def remote_ref(node: Any, at: str = "") -> tuple[str, str] | None:
    """The first reference in ``node`` that leaves the document: (its JSON Pointer, its value).
    Every reference keyword is checked wherever it sits (a schema, a path item, an example's
    data): the validator's resolver would follow any of them."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            if found := remote_ref(item, f"{at}/{index}"):
                return found
    elif isinstance(node, dict):
        for key, value in node.items():
            where = f"{at}/{str(key).replace('~', '~0').replace('/', '~1')}"
            if key in REF_KEYWORDS and isinstance(value, str) and not value.startswith("#"):
                return where, value
            if found := remote_ref(value, where):
                return found
    return None


class NoRetrieval(dict[str, Any]):
    """Resolver handlers that hold every scheme and retrieve nothing. jsonschema-path's retriever
    falls back to ``urlopen`` for a scheme its handlers lack, so an empty mapping is not enough:
    this one claims every scheme (``__contains__``) and refuses each. A reference that a ``$id``
    turns remote (``"$id": "file:///etc/"`` beside a ``#...`` ref) ends here, as a 400."""

    def __contains__(self, scheme: object) -> bool:
        return True

    def __getitem__(self, scheme: str) -> Any:
        return self._refuse

    @staticmethod
    def _refuse(uri: str) -> Any:
        raise InvalidDocument(f"only local references are followed, not {uri!r}")


def check(document: dict[str, Any]) -> str:
    found = version(document)
    if remote := remote_ref(document):
        where, ref = remote
        raise InvalidDocument(f"the reference at '{where}' leaves the document ({ref!r}): only local "
                              "references ('#/components/...') are followed")
    try:
        validator = get_validator_cls(document)(SchemaPath.from_dict(document, handlers=NoRetrieval()))
        validator.validate()
    except OpenAPIValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) if hasattr(exc, "absolute_path") else ""
        raise InvalidDocument(f"not a valid OpenAPI {found} document at '/{where}': {exc.message}") from None
    except InvalidDocument:
        raise
    except Exception as exc:  # the resolver's errors (a pointer to nothing, an odd $id): the document's fault
        raise InvalidDocument(f"not a valid OpenAPI {found} document: {type(exc).__name__}: "
                              f"{str(exc)[:300]}") from None
    return found


def _pointer(document: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        raise InvalidDocument(f"only local references are followed, not {ref!r}")
    node: Any = document
    for token in ref[1:].lstrip("/").split("/") if ref not in ("#", "#/") else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise InvalidDocument(f"reference {ref!r} points at nothing")
    return node


class _Budget:
    """Nodes ``resolve`` may still produce: local references nest too (each schema naming the
    previous one nine times is a "billion laughs" without YAML), and the cut at ``MAX_DEPTH``
    alone would let one build 9**40 nodes."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_NODES

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise InvalidDocument(f"its references expand past {MAX_NODES} nodes: write the schemas "
                                  "out, or import fewer operations")


def resolve(node: Any, document: dict[str, Any]) -> Any:
    """``node`` with every local ``$ref`` inlined (cut at cycles and at ``MAX_DEPTH``;
    ``InvalidDocument`` past ``MAX_NODES``)."""
    return _resolve(node, document, (), 0, _Budget())


def _resolve(node: Any, document: dict[str, Any], seen: tuple[str, ...], depth: int, budget: _Budget) -> Any:
    budget.spend()
    if depth > MAX_DEPTH:
        return {}
    if isinstance(node, list):
        return [_resolve(item, document, seen, depth + 1, budget) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in seen:
            return {}
        target = _resolve(_pointer(document, ref), document, (*seen, ref), depth + 1, budget)
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if siblings and isinstance(target, dict):  # 3.1 allows siblings (description, ...)
            return {**target, **_resolve(siblings, document, seen, depth + 1, budget)}
        return target
    return {key: _resolve(value, document, seen, depth + 1, budget) for key, value in node.items()}


def to_json_schema(schema: Any, openapi: str) -> Any:
    """A resolved OpenAPI schema as JSON Schema 2020-12 (3.0 dialect converted; 3.1 as is)."""
    if not isinstance(schema, dict | list):
        return schema
    if isinstance(schema, list):
        return [to_json_schema(item, openapi) for item in schema]
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in SCHEMA_MAPS and isinstance(value, dict):  # name -> schema: the names are data
            out[key] = {name: to_json_schema(sub, openapi) for name, sub in value.items()}
        elif key in ("example", "default", "enum", "const", "required"):
            out[key] = value  # values, not schemas
        else:
            out[key] = to_json_schema(value, openapi)
    for union in ("oneOf", "anyOf"):
        if isinstance(out.get(union), list) and {} in out[union]:
            del out[union]
    if out.pop("nullable", False) is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    for bound, limit in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if openapi.startswith("3.0.") and isinstance(out.get(bound), bool):
            if out.pop(bound) and limit in out:
                out[bound] = out.pop(limit)
    return out
