"""RFC 6570 §3.2 expansion (Levels 1-4)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import quote

from .parts import Expression, Value

# §3.2.1: what each operator leaves unencoded (unreserved; "+" and "#" also reserved and %XX).
UNRESERVED = "-._~"
RESERVED = ":/?#[]@!$&'()*+,;="
# (first, separator, named, if-empty) per operator: RFC 6570 Appendix A.
_RULES = {
    "": ("", ",", False, ""),
    "+": ("", ",", False, ""),
    "#": ("#", ",", False, ""),
    ".": (".", ".", False, ""),
    "/": ("/", "/", False, ""),
    ";": (";", ";", True, ""),
    "?": ("?", "&", True, "="),
    "&": ("&", "&", True, "="),
}
_TRIPLET_SPLIT = re.compile(r"(%[0-9A-Fa-f]{2})")


def _encode(text: str, operator: str) -> str:
    if operator in ("+", "#"):
        # Reserved expansion: reserved characters and %XX triplets pass through (§3.2.3).
        return "".join(
            piece if piece.startswith("%") else quote(piece, safe=UNRESERVED + RESERVED)
            for piece in _TRIPLET_SPLIT.split(text)
            if piece
        )
    return quote(text, safe=UNRESERVED)


def expand_expression(expression: Expression, values: Mapping[str, Value]) -> str:
    first, separator, named, if_empty = _RULES[expression.operator]
    op = expression.operator
    out: list[str] = []
    for var in expression.variables:
        value = values.get(var.name)
        if value is None or (not isinstance(value, str) and len(value) == 0):
            continue
        if isinstance(value, str):
            text = _encode(value[: var.prefix] if var.prefix else value, op)
            out.append(f"{var.name}{'=' + text if text else if_empty}" if named else text)
        elif isinstance(value, Mapping):
            pairs = [(_encode(k, op), _encode(v, op)) for k, v in value.items()]
            if var.explode:
                out.append(separator.join(f"{k}={v}" for k, v in pairs))
            else:
                joined = ",".join(f"{k},{v}" for k, v in pairs)
                out.append(f"{var.name}={joined}" if named else joined)
        else:
            items = [_encode(item, op) for item in value]
            if var.explode:
                out.append(separator.join(f"{var.name}={i}" if named else i for i in items))
            else:
                out.append(f"{var.name}={','.join(items)}" if named else ",".join(items))
    return first + separator.join(out) if out else ""
