"""RFC 6570 URI templates: parse and check the syntax, list the variables, and match a URI.

``uritemplate`` expands templates but cannot *match* a URI against one, which ``resources/read``
needs (server/resources.mdx "Resource Templates": the server extracts the variables from the
requested URI). Matching is the inverse of expansion for every operator of Level 1-4, without
list/associative values: an exploded ``{/path*}`` yields the joined remainder, an exploded query
yields its first value per name, and a prefix ``{var:3}`` matches at most 3 characters. Values are
percent-decoded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote

OPERATORS = "+#./;?&"
_RESERVED_OPERATORS = "=,!@|"
_VARNAME_RE = re.compile(r"^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$")
_MODIFIER_RE = re.compile(r"^(?::[1-9][0-9]{0,3}|\*)?$")
# RFC 6570 §2.1 literals: any char except CTL, SP, DQUOTE, "'", "%" (unless pct-encoded), "<", ">",
# "\", "^", "`", "{", "|", "}".
_BAD_LITERAL_RE = re.compile(r"[\x00-\x20\"'<>\\^`{|}\x7f]|%(?![0-9A-Fa-f]{2})")
# What each operator's value may contain when matching (simple expansion encodes reserved chars).
_VALUE = {"": r"[^/?#,&]*", "+": r".*?", "#": r".*?", ".": r"[^/?#.;]*", "/": r"[^/?#]*", ";": r"[^;/?#]*"}


class TemplateSyntaxError(ValueError):
    pass


@dataclass(frozen=True)
class VarSpec:
    name: str
    explode: bool = False
    prefix: int | None = None  # {var:3}: at most the first 3 characters of the value (§2.4.1)


@dataclass(frozen=True)
class Expression:
    operator: str
    variables: tuple[VarSpec, ...]


@dataclass(frozen=True)
class ParsedTemplate:
    template: str
    parts: tuple[str | Expression, ...]

    @property
    def variables(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for part in self.parts:
            if isinstance(part, Expression):
                seen.update((v.name, None) for v in part.variables)
        return tuple(seen)

    def example_uri(self, value: str = "x") -> str:
        """The template expanded with every variable set to ``value`` (to check it forms a URI)."""
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            op, names = part.operator, [v.name for v in part.variables]
            if op in ("", "+"):
                out.append(",".join(value for _ in names))
            elif op in ("#", ".", "/"):
                sep = "," if op == "#" else op
                out.append(op + sep.join(value for _ in names))
            elif op == ";":
                out.append("".join(f";{n}={value}" for n in names))
            else:
                out.append(op + "&".join(f"{n}={value}" for n in names))
        return "".join(out)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of ``uri`` if it is an expansion of this template, else None."""
        regex, groups, query_groups = _compile(self)
        found = regex.fullmatch(uri)
        if found is None:
            return None
        seen: list[tuple[VarSpec, str]] = []
        for group, var in groups.items():
            value = found.group(group)
            if value is not None:
                seen.append((var, unquote(value)))
        for group, variables in query_groups.items():
            query = found.group(group)
            if query is None:
                continue
            parsed = parse_qs(query, keep_blank_values=True)
            seen.extend((var, parsed[var.name][0]) for var in variables if var.name in parsed)
        return _combine(seen)


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
    if not isinstance(template, str) or not template:
        raise TemplateSyntaxError("the template is empty")
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


_Compiled = tuple[re.Pattern[str], dict[str, VarSpec], dict[str, list[VarSpec]]]
_cache: dict[str, _Compiled] = {}


def _compile(parsed: ParsedTemplate) -> _Compiled:
    cached = _cache.get(parsed.template)
    if cached is not None:
        return cached
    pattern: list[str] = []
    groups: dict[str, VarSpec] = {}
    query_groups: dict[str, list[VarSpec]] = {}
    for part in parsed.parts:
        if isinstance(part, str):
            pattern.append(re.escape(part))
            continue
        op = part.operator
        if op in ("?", "&"):
            group = f"q{len(query_groups)}"
            query_groups[group] = list(part.variables)
            pattern.append(rf"(?:{re.escape(op)}(?P<{group}>[^#]*))?")
            continue
        pieces = []
        for var in part.variables:
            group = f"g{len(groups)}"
            groups[group] = var
            value = r"[^?#]*" if (var.explode and op == "/") else _VALUE[op]
            if op == ";":
                pieces.append(rf"(?:;{re.escape(var.name)}(?:=(?P<{group}>{value}))?)?")
            elif op in (".", "/"):
                pieces.append(rf"(?:{re.escape(op)}(?P<{group}>{value}))?")
            else:
                pieces.append(rf"(?P<{group}>{value})")
        if op in (".", "/", ";"):
            pattern.append("".join(pieces))
        else:
            prefix = re.escape("#") if op == "#" else ""
            pattern.append(prefix + ",?".join(pieces))
    compiled = (re.compile("".join(pattern), re.DOTALL), groups, query_groups)
    _cache[parsed.template] = compiled
    return compiled
