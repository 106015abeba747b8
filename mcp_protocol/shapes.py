"""The shape of each request's ``params``, per method and revision, checked before any handler runs.

A request whose params do not have the types its revision's ``schema.ts`` gives is a malformed
request for that method: -32602 Invalid params (basic/index.mdx error codes; checklist "bad params,
cursor → -32602"). Handlers then read fields they can trust, and a wrong type can never become a
500 deep inside one. Only the members a revision defines are checked; unknown members are allowed
(every schema object is open). Missing required members are left to the handlers, which name them.

- ``_meta`` (every request, [24]+): an object when present; its ``progressToken`` a string or an
  integer (``ProgressToken``: ``"type": ["string", "integer"]`` in schema.json).
- ``cursor`` (``PaginatedRequest``): a string when present; ``null`` is not a string.
- per method: the typed members of its params (strings, objects, objects of strings).

Pure and protocol-level: no HTTP, no registry, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import versions
from .errors import InvalidParams

Check = Callable[[Any], bool]


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _object(value: Any) -> bool:
    return isinstance(value, dict)


def _object_of_strings(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _progress_token(value: Any) -> bool:
    # bool is an int in Python but not a JSON integer.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


_KIND: dict[Check, str] = {
    _string: "a string",
    _object: "an object",
    _object_of_strings: "an object whose values are strings",
    _progress_token: "a string or an integer",
}

Shape = dict[str, Check]
_PAGINATED: Shape = {"cursor": _string}
_URI: Shape = {"uri": _string}

# Members every revision types the same way. completion/complete's ref and argument are checked
# member by member below (their own members are typed too).
_SHAPES: dict[str, Shape] = {
    "initialize": {"protocolVersion": _string, "capabilities": _object, "clientInfo": _object},
    "tools/list": _PAGINATED,
    "resources/list": _PAGINATED,
    "resources/templates/list": _PAGINATED,
    "prompts/list": _PAGINATED,
    "tools/call": {"name": _string, "arguments": _object},
    "resources/read": _URI,
    "skills/list": _PAGINATED,
    "skills/get": _URI,
    "resources/directory/read": {"uri": _string, "cursor": _string},
    "resources/subscribe": _URI,
    "resources/unsubscribe": _URI,
    "prompts/get": {"name": _string, "arguments": _object_of_strings},
    "logging/setLevel": {"level": _string},
    "completion/complete": {"ref": _object, "argument": _object},
}
_COMPLETION_REF: Shape = {"type": _string, "name": _string, "uri": _string}
_COMPLETION_ARGUMENT: Shape = {"name": _string, "value": _string}
# [06+] CompleteRequest.params.context: {arguments?: {[key]: string}}.
_COMPLETION_CONTEXT: Shape = {"arguments": _object_of_strings}


# ``arguments: null`` has always been read as "no arguments" here, and clients that serialize an
# unset optional as null send it: refusing it now would break them for no safety gained.
_NULL_MEANS_ABSENT = frozenset({"arguments"})


def _check(shape: Shape, params: dict[str, Any], where: str) -> None:
    for key, check in shape.items():
        if key not in params:
            continue
        value = params[key]
        if value is None and key in _NULL_MEANS_ABSENT:
            continue
        if not check(value):
            raise InvalidParams(f"{where}{key} must be {_KIND[check]}", {"param": f"{where}{key}"})


def check_params(method: str, params: dict[str, Any], version: str) -> None:
    """Raise ``InvalidParams`` when ``params`` does not have the types ``method`` takes in ``version``."""
    if "_meta" in params:
        meta = params["_meta"]
        if not isinstance(meta, dict):
            raise InvalidParams("params._meta must be an object", {"param": "params._meta"})
        if "progressToken" in meta and not _progress_token(meta["progressToken"]):
            raise InvalidParams(
                "params._meta.progressToken must be a string or an integer",
                {"param": "params._meta.progressToken"},
            )
    shape = _SHAPES.get(method)
    if shape is None:
        return
    _check(shape, params, "params.")
    if method == "completion/complete":
        _check(_COMPLETION_REF, params.get("ref") or {}, "params.ref.")
        _check(_COMPLETION_ARGUMENT, params.get("argument") or {}, "params.argument.")
        if versions.has_completion_context(version) and "context" in params:
            context = params["context"]
            if not isinstance(context, dict):
                raise InvalidParams("params.context must be an object", {"param": "params.context"})
            _check(_COMPLETION_CONTEXT, context, "params.context.")
