"""JSON-RPC 2.0 framing: decode bytes, classify one message, build response objects, serialize.

Pure and I/O-free. This module owns the *shape* rules of basic/index.mdx (ids are strings or
integers, never null; requests carry a string ``method``; ``params`` is an object) and the
JSON-RPC 2.0 error objects for malformed input. What a method *means* belongs to ``server.py``.

Choice: MCP defines every ``params`` as an object, so a non-object ``params`` (array, string…) is
rejected as ``-32600`` Invalid Request: the message does not have the MCP request shape.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from .errors import InvalidRequest, MCPError, ParseError

JSONRPC = "2.0"
RequestId = str | int


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Response:
    id: RequestId | None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


Message = Request | Notification | Response

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ascii_encoder = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)
# A \uD800-\uDFFF escape is the only way a JSON text can smuggle a surrogate past the UTF-8
# decoder (which refuses encoded surrogates). Pairs become one code point; a lone one would stay a
# surrogate that no UTF-8 encoder can write back. The regex is a cheap pre-filter: only texts that
# hold such an escape pay for the walk (an escaped backslash before "ud8.." is a false positive,
# harmless: the walk then finds nothing).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def _not_json_constant(name: str) -> Any:
    # NaN, Infinity and -Infinity are not JSON (RFC 8259 §6), though Python's parser takes them.
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e400: no JSON number the serializer could write back
        raise ValueError("number out of range")
    return value


_decoder = json.JSONDecoder(parse_constant=_not_json_constant, parse_float=_finite_float)


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def decode(data: bytes | str) -> Any:
    """Parse a JSON text; anything that is not UTF-8 JSON is a parse error ([03+] basic/transports.mdx).

    What this accepts, ``dumps`` can always write back: valid Unicode only (RFC 8259 §8.1: JSON
    exchanged between systems MUST be UTF-8; a lone surrogate escape is no Unicode text), finite
    numbers only. Caught here, at the edge, so no handler sees such a value and no echo of it can
    fail while serializing.
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
        obj = _decoder.decode(text)
        if _SURROGATE_ESCAPE.search(text) is not None and _has_lone_surrogate(obj):
            raise ValueError("lone surrogate")
        return obj
    except (UnicodeError, ValueError, RecursionError) as exc:
        raise ParseError("Parse error") from exc


def _valid_id(value: Any) -> bool:
    # bool is an int subclass in Python; JSON true/false is not a valid id (basic/index.mdx).
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _invalid(message: str, request_id: RequestId | None) -> InvalidRequest:
    exc = InvalidRequest(message)
    exc.request_id = request_id  # type: ignore[attr-defined]
    return exc


def parse_message(obj: Any) -> Message:
    """Classify one decoded JSON value as a request, notification or response.

    Raises ``InvalidRequest`` whose ``request_id`` attribute holds the id when it was valid, so
    the error response can echo it (``None`` otherwise → ``"id": null``).
    """
    if not isinstance(obj, dict):
        raise _invalid("Invalid Request: a message must be a JSON object", None)
    has_id = "id" in obj
    raw_id = obj.get("id")
    request_id: RequestId | None = raw_id if _valid_id(raw_id) else None
    if obj.get("jsonrpc") != JSONRPC:
        raise _invalid('Invalid Request: "jsonrpc" must be "2.0"', request_id)
    if has_id and request_id is None and "method" in obj:
        raise _invalid("Invalid Request: id must be a string or an integer", None)

    if "method" in obj:
        if "result" in obj or "error" in obj:
            # JSON-RPC 2.0 §4: a request object has no result/error member; one that does is
            # neither a request nor a response.
            raise _invalid('Invalid Request: a request must not carry "result" or "error"', request_id)
        method = obj["method"]
        if not isinstance(method, str) or not method:
            raise _invalid('Invalid Request: "method" must be a non-empty string', request_id)
        params = obj.get("params")
        if params is not None and not isinstance(params, dict):
            raise _invalid('Invalid Request: "params" must be an object', request_id)
        if request_id is None:
            return Notification(method, params)
        return Request(request_id, method, params)

    # A response: exactly one of result / error (JSON-RPC 2.0 §5).
    if "result" in obj and "error" not in obj:
        if not has_id or request_id is None:
            raise _invalid("Invalid Request: a response needs a string or integer id", None)
        result = obj["result"]
        if not isinstance(result, dict):  # every MCP result is an object (schema.ts "Result")
            raise _invalid("Invalid Request: a result must be an object", request_id)
        return Response(request_id, result=result)
    if "error" in obj and "result" not in obj:
        error = obj["error"]
        if not isinstance(error, dict) or not isinstance(error.get("code"), int):
            raise _invalid("Invalid Request: malformed error object", request_id)
        if not has_id or (raw_id is not None and request_id is None):
            raise _invalid("Invalid Request: bad response id", None)
        return Response(request_id, error=error)
    raise _invalid('Invalid Request: missing "method"', request_id)


def parse_body(data: bytes | str) -> Message | list[Message | InvalidRequest]:
    """Decode a body: one message, or a batch (JSON array) whose bad elements come back as errors."""
    obj = decode(data)
    if isinstance(obj, list):
        if not obj:
            raise _invalid("Invalid Request: empty batch", None)
        items: list[Message | InvalidRequest] = []
        for element in obj:
            try:
                items.append(parse_message(element))
            except InvalidRequest as exc:
                items.append(exc)
        return items
    return parse_message(obj)


# -- builders --------------------------------------------------------------------------------------
def result_response(id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": id, "result": result}


def error_response(id: RequestId | None, error: MCPError | dict[str, Any]) -> dict[str, Any]:
    body = error.to_error() if isinstance(error, MCPError) else error
    return {"jsonrpc": JSONRPC, "id": id, "error": body}


def notification(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC, "method": method}
    if params is not None:
        message["params"] = params
    return message


def request(id: RequestId, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC, "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


class EncodedResult(dict[str, Any]):
    """A result object that carries its own JSON text (``dumps(dict(self))``), made once and reused
    (``methods/listing.py``: a tools/list page per snapshot, grant and revision). ``dumps`` of a
    response holding it splices the text in instead of encoding the result again. Any change to
    the dict itself drops the text (2026-07-28 results get ``resultType``/``_meta`` added); its
    values are shared and must not be changed."""

    __slots__ = ("encoded",)

    def __init__(self, items: dict[str, Any], encoded: bytes | None = None) -> None:
        super().__init__(items)
        self.encoded: bytes | None = dumps(items) if encoded is None else encoded

    def __setitem__(self, key: str, value: Any) -> None:
        self.encoded = None
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.encoded = None
        super().__delitem__(key)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self.encoded = None
        return super().setdefault(key, default)

    def pop(self, key: str, *default: Any) -> Any:
        if key in self:
            self.encoded = None
        return super().pop(key, *default)

    def popitem(self) -> tuple[str, Any]:
        self.encoded = None
        return super().popitem()

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.encoded = None
        super().update(*args, **kwargs)

    def clear(self) -> None:
        self.encoded = None
        super().clear()

    def __ior__(self, other: Any) -> EncodedResult:  # type: ignore[override,misc]
        self.encoded = None
        super().__ior__(other)
        return self


def _spliced(obj: dict[str, Any]) -> bytes | None:
    """A ``result_response`` around an intact ``EncodedResult``: the same bytes ``dumps`` would
    write, without encoding the result again."""
    result = obj.get("result")
    if type(result) is not EncodedResult or result.encoded is None or len(obj) != 3:
        return None
    if obj.get("jsonrpc") != JSONRPC or "id" not in obj:
        return None
    try:
        head = _encoder.encode(obj["id"]).encode("utf-8")
    except UnicodeEncodeError:
        return None
    return b'{"jsonrpc":"2.0","id":' + head + b',"result":' + result.encoded + b"}"


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON (no NaN/Infinity: they are not JSON).

    The parser lets no lone surrogate in, but a provider's data may hold one (a tool result built
    from bytes decoded with ``surrogateescape``): then the text goes out ASCII-escaped rather than
    failing the response.
    """
    if type(obj) is dict and "result" in obj:
        spliced = _spliced(obj)
        if spliced is not None:
            return spliced
    try:
        return _encoder.encode(obj).encode("utf-8")
    except UnicodeEncodeError:
        return _ascii_encoder.encode(obj).encode("ascii")


def error_id(exc: BaseException) -> RequestId | None:
    """The id an error response for ``exc`` should echo (set by ``parse_message``)."""
    value = getattr(exc, "request_id", None)
    return value if _valid_id(value) else None
