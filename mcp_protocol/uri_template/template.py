"""A parsed RFC 6570 template: parsing (§2), and the values a match reads (see the package
docstring for what each operator's variables may contain)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

from .expansion import expand_expression
from .matching import Solver
from .parts import Expression, Part, TemplateSyntaxError, Value, VarSpec
from .program import Groups, Node, compile_program
from .steps import RESERVED_TRIPLET

OPERATORS = "+#./;?&"
_RESERVED_OPERATORS = "=,!@|"
_VARNAME_RE = re.compile(r"^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$")
_MODIFIER_RE = re.compile(r"^(?::[1-9][0-9]{0,3}|\*)?$")
# RFC 6570 §2.1 literals: any char except CTL, SP, DQUOTE, "'", "%" (unless pct-encoded), "<", ">",
# "\", "^", "`", "{", "|", "}".
_BAD_LITERAL_RE = re.compile(r"[\x00-\x20\"'<>\\^`{|}\x7f]|%(?![0-9A-Fa-f]{2})")
_LENIENT_ONLY = re.compile(r"[!$&'()*+,;=:@]")
# Longer URIs match no template: matching is linear in the URI's length (matching.py), this keeps
# its memory small.
MAX_URI_LENGTH = 4096


@dataclass(frozen=True)
class ParsedTemplate:
    template: str
    parts: tuple[Part, ...]

    @property
    def variables(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for part in self.parts:
            if isinstance(part, Expression):
                seen.update((v.name, None) for v in part.variables)
        return tuple(seen)

    @property
    def literal_length(self) -> int:
        return sum(len(part) for part in self.parts if isinstance(part, str))

    def expand(self, values: Mapping[str, Value]) -> str:
        """RFC 6570 §3.2 expansion; a variable missing from ``values`` (or ``None``) is undefined."""
        return "".join(
            part if isinstance(part, str) else expand_expression(part, values) for part in self.parts
        )

    def example_uri(self, value: str = "x") -> str:
        """The template expanded with every variable set to ``value`` (to check it forms a URI)."""
        return self.expand(dict.fromkeys(self.variables, value))

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of ``uri`` if it is an expansion of this template, else None."""
        if len(uri) > MAX_URI_LENGTH:
            return None
        # An exact inverse of expansion first; the lenient pass only when the URI has a character
        # only it accepts (otherwise both accept the same URIs, and a miss would cost twice).
        for lenient in (False, True) if _LENIENT_ONLY.search(uri) else (False,):
            nodes, groups = compiled_program(self.template, lenient)
            found = Solver(nodes, uri).captures()
            if found is not None:
                return _read(found, groups)
        return None


@lru_cache(maxsize=4096)
def compiled_program(template: str, lenient: bool) -> tuple[list[Node], Groups]:
    return compile_program(parse_template(template).parts, lenient)


def _read(found: Mapping[str, str], groups: Groups) -> dict[str, str] | None:
    seen: list[tuple[VarSpec, str]] = []
    for group, var, kind in groups:
        text = found.get(group)
        if kind == "query":
            if text is not None:
                seen.extend(_query_values(text, var))
        elif kind == "named":  # ";x" is the empty value (§3.2.7); ";x=v" is "v"
            if text is not None:
                value = found.get(f"{group}v")
                seen.append((var, unquote(value or "")))
            elif var.explode and (listed := found.get(f"{group}e")) is not None:  # a list or a map
                seen.append((var, unquote(listed)))
        elif text is not None:
            seen.append((var, _decode_reserved(text) if kind == "reserved" else unquote(text)))
    return _combine(seen)


def _decode_reserved(text: str) -> str:
    """A reserved expansion's text decoded, except the %XX of reserved characters: ``{+x}`` passes
    them through as they were given (§3.2.3), so ``a%2Fb`` is the value ``a%2Fb``, not ``a/b``."""
    pieces = RESERVED_TRIPLET.split(text)  # odd indexes: the reserved characters' %XX
    return "".join(piece if i % 2 else unquote(piece) for i, piece in enumerate(pieces))


def _query_values(query: str, var: VarSpec) -> list[tuple[VarSpec, str]]:
    """The first ``name=value`` of ``var`` in a query (``+`` is a plus here, not a space)."""
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        if unquote(name) == var.name:
            return [(var, unquote(value))]
    return []


def _combine(seen: list[tuple[VarSpec, str]]) -> dict[str, str] | None:
    """One value per variable, or None if the occurrences cannot come from one expansion.

    RFC 6570 §2.4.1: ``{var:N}`` expands to at most the first N characters of the value (counted
    before percent-encoding), so a longer match is not an expansion. A variable used twice, as in
    ``{id:2}/{id}``, takes its full occurrence's value; each prefix occurrence must be its start.
    """
    result: dict[str, str] = {}
    prefixes: list[tuple[VarSpec, str]] = []
    for var, value in seen:
        if var.prefix is not None:
            if len(value) > var.prefix:
                return None
            prefixes.append((var, value))
        elif result.setdefault(var.name, value) != value:
            return None
    for var, value in prefixes:
        full = result.get(var.name)
        if full is None:
            result[var.name] = value
        elif full[: var.prefix] != value:
            return None
    return result


def parse_template(template: str) -> ParsedTemplate:
    """The parsed template (cached), or ``TemplateSyntaxError`` saying what is wrong where."""
    if not isinstance(template, str) or not template:
        raise TemplateSyntaxError("the template is empty")
    return _parse(template)


@lru_cache(maxsize=4096)
def _parse(template: str) -> ParsedTemplate:
    parts: list[str | Expression] = []
    pos = 0
    while pos < len(template):
        start = template.find("{", pos)
        close = template.find("}", pos)
        if close != -1 and (start == -1 or close < start):
            raise TemplateSyntaxError(f"unmatched '}}' at position {close}")
        if start == -1:
            _check_literal(template[pos:], pos)
            parts.append(template[pos:])
            break
        if start > pos:
            _check_literal(template[pos:start], pos)
            parts.append(template[pos:start])
        end = template.find("}", start)
        if end == -1:
            raise TemplateSyntaxError(f"unclosed '{{' at position {start}")
        parts.append(_parse_expression(template[start + 1 : end], start))
        pos = end + 1
    return ParsedTemplate(template, tuple(parts))


def _check_literal(text: str, offset: int) -> None:
    bad = _BAD_LITERAL_RE.search(text)
    if bad:
        raise TemplateSyntaxError(
            f"character {bad.group()!r} at position {offset + bad.start()} is not allowed"
        )


def _parse_expression(body: str, offset: int) -> Expression:
    if "{" in body:
        raise TemplateSyntaxError(f"nested '{{' in the expression at position {offset}")
    if not body:
        raise TemplateSyntaxError(f"empty expression '{{}}' at position {offset}")
    operator = ""
    if body[0] in OPERATORS:
        operator, body = body[0], body[1:]
    elif body[0] in _RESERVED_OPERATORS:
        raise TemplateSyntaxError(f"operator {body[0]!r} is reserved for future extensions (RFC 6570 §2.2)")
    specs: list[VarSpec] = []
    for raw in body.split(","):
        match = re.match(r"^([^:*]*)(.*)$", raw)
        name, modifier = (match.group(1), match.group(2)) if match else (raw, "")
        if not _VARNAME_RE.fullmatch(name):
            raise TemplateSyntaxError(f"{name!r} is not a valid variable name (letters, digits, '_', '.')")
        if not _MODIFIER_RE.fullmatch(modifier):
            raise TemplateSyntaxError(f"{modifier!r} after {name!r} is not ':<1-9999>' or '*'")
        prefix = int(modifier[1:]) if modifier.startswith(":") else None
        specs.append(VarSpec(name, explode=modifier == "*", prefix=prefix))
    return Expression(operator, tuple(specs))
