"""RFC 6570 URI templates: the one parser, expander and matcher of the project, and the rule that
says which of several templates serves a URI.

``resources/read`` needs to *match* a URI against templates (server/resources.mdx "Resource
Templates": the server extracts the variables from the requested URI), and the grant check must
reach the same verdict: a read is granted for the template that serves it
(``auth/scopes.py``). So everything that matches (the grant check, ``resources/read``, completion,
the memory provider and the registry provider) asks this module, and nothing else matches.

Matching is the inverse of expansion (§3.2, Levels 1-4): ``match(uri)`` returns values whose
expansion is ``uri``, percent-decoded. Per operator, what one variable's text may contain:

============  ========================================================================
``{x}``       no ``/ ? # &``: a simple value never spans a path segment
``{+x}``      anything (reserved expansion)
``{#x}``      anything, after a ``#``; the whole expression is absent when ``x`` is undefined
``{.x}``      no ``/ ? # ;`` (``.`` is unreserved: ``{.x}`` with ``x = "tar.gz"`` is ``.tar.gz``)
``{/x}``      no ``/ ? #``: one path segment; ``{/x*}`` (explode) may span segments
``{;x}``      ``;x`` (empty value) or ``;x=value``, the value without ``/ ? # ;``
``{?x}``      ``{&x}``: a query whose first pair is one of its variables, read by name; other
              pairs are ignored (a query expression reads the rest of the URI up to ``#``)
============  ========================================================================

In a list of variables (``{x,y}``, ``{/x,y}``) every variable but the last takes as little as it
can, so the separator goes between them; an undefined variable leaves its text out. A list or an
associative value (Level 4) comes back as the text it expanded to (``{/list*}`` →
``"red/green/blue"``). A prefix (``{x:3}``) matches at most 3 characters of the decoded value;
a variable used twice (``{id:2}/{id}``) must agree with itself. Reserved expansion (``+``, ``#``)
passes ``%XX`` through, so its values keep the ``%XX`` of reserved characters (``{+x}`` reads
``a%2Fb`` as ``a%2Fb``, ``a/b`` as ``a/b``) and decode the rest. A URI a client wrote with
unencoded sub-delims, ``:`` or ``@`` in a simple value (``users://a:b/profile``) matches in a
second, lenient pass; no pass lets a ``/`` into ``{/x}`` or ``{x}``.

Which template serves a URI (``serving_template``): of the templates that match it, the one with
the most literal characters, then the fewest variables, then the smallest template text. The
order depends on the templates only, never on names or listing order, so ``demo://docs/internal/{id}``
serves ``demo://docs/internal/7`` before ``demo://docs{/name*}`` whatever either is called.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, unquote

OPERATORS = "+#./;?&"
_RESERVED_OPERATORS = "=,!@|"
_VARNAME_RE = re.compile(r"^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$")
_MODIFIER_RE = re.compile(r"^(?::[1-9][0-9]{0,3}|\*)?$")
# RFC 6570 §2.1 literals: any char except CTL, SP, DQUOTE, "'", "%" (unless pct-encoded), "<", ">",
# "\", "^", "`", "{", "|", "}".
_BAD_LITERAL_RE = re.compile(r"[\x00-\x20\"'<>\\^`{|}\x7f]|%(?![0-9A-Fa-f]{2})")
# One character of a variable's text, per operator: what its expansion writes (unreserved and
# %XX; reserved too for "+" and "#"), and in the lenient pass also the sub-delims, ":" and "@" a
# client may leave unencoded, except the operator's own delimiters. No pass lets "/" into a "{/x}".
_U = r"A-Za-z0-9\-._~"
_STRICT = {"": _U, ".": _U, "/": _U, ";": _U}
_LENIENT = {"": _U + r"!$'()*+,;=:@", ".": _U + r"!$&'()*+,=:@", "/": _U + r"!$&'()*+,;=:@",
            ";": _U + r"!$&'()*+,=:@"}
_PCT = r"%[0-9A-Fa-f]{2}"
# One decoded character as %XX triplets (UTF-8: 1 to 4 bytes), for prefixes ({x:3}) to count.
_PCT_CHAR = (r"%(?:[0-7][0-9A-Fa-f]|[CDcd][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]"
             r"|[Ee][0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f]){2}|[Ff][0-7](?:%[89ABab][0-9A-Fa-f]){3})")
_LENIENT_ONLY = re.compile(r"[!$&'()*+,;=:@]")
# Longer URIs match no template. Matching backtracks: a template with variables side by side and
# nothing between them ("{a}{b}{c}") costs polynomial time in the URI's length on a URI it does
# not match (as any backtracking matcher of it would); this bounds it.
MAX_URI_LENGTH = 4096
# §3.2.1: what each operator leaves unencoded (unreserved; "+" and "#" also reserved and %XX).
_UNRESERVED = "-._~"
_RESERVED = ":/?#[]@!$&'()*+,;="
_RESERVED_TRIPLET = re.compile("(" + "|".join(f"%{ord(c):02X}" for c in _RESERVED) + ")", re.IGNORECASE)
# (first, separator, named, if-empty) per operator: RFC 6570 Appendix A.
_RULES = {"": ("", ",", False, ""), "+": ("", ",", False, ""), "#": ("#", ",", False, ""),
          ".": (".", ".", False, ""), "/": ("/", "/", False, ""), ";": (";", ";", True, ""),
          "?": ("?", "&", True, "="), "&": ("&", "&", True, "=")}

Value = str | Sequence[str] | Mapping[str, str]


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

    @property
    def literal_length(self) -> int:
        return sum(len(part) for part in self.parts if isinstance(part, str))

    def expand(self, values: Mapping[str, Value]) -> str:
        """RFC 6570 §3.2 expansion; a variable missing from ``values`` (or ``None``) is undefined."""
        return "".join(part if isinstance(part, str) else _expand(part, values) for part in self.parts)

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
            regex, groups = _compile(self.template, lenient)
            found = regex.fullmatch(uri)
            if found is not None:
                return _read(found, groups)
        return None


def _read(found: re.Match[str], groups: Groups) -> dict[str, str] | None:
    seen: list[tuple[VarSpec, str]] = []
    for group, var, kind in groups:
        text = found.group(group)
        if kind == "query":
            if text is not None:
                seen.extend(_query_values(text, var))
        elif kind == "named":  # ";x" is the empty value (§3.2.7); ";x=v" is "v"
            if text is not None:
                value = found.group(f"{group}v")
                seen.append((var, unquote(value or "")))
            elif var.explode and found.group(f"{group}e") is not None:  # a list or a map: its text
                seen.append((var, unquote(found.group(f"{group}e"))))
        elif text is not None:
            seen.append((var, _decode_reserved(text) if kind == "reserved" else unquote(text)))
    return _combine(seen)


def _decode_reserved(text: str) -> str:
    """A reserved expansion's text decoded, except the %XX of reserved characters: ``{+x}`` passes
    them through as they were given (§3.2.3), so ``a%2Fb`` is the value ``a%2Fb``, not ``a/b``."""
    pieces = _RESERVED_TRIPLET.split(text)  # odd indexes: the reserved characters' %XX
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


def _encode(text: str, operator: str) -> str:
    if operator in ("+", "#"):
        # Reserved expansion: reserved characters and %XX triplets pass through (§3.2.3).
        return "".join(piece if piece.startswith("%") else quote(piece, safe=_UNRESERVED + _RESERVED)
                       for piece in re.split(r"(%[0-9A-Fa-f]{2})", text) if piece)
    return quote(text, safe=_UNRESERVED)


def _expand(expression: Expression, values: Mapping[str, Value]) -> str:
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


# -- the matcher: one regular expression per template --------------------------------------------
# (group, variable, how to read it: "value" its text, "reserved" its text as {+x} wrote it,
# "named" a ";x=v" pair, "query" a query)
Groups = tuple[tuple[str, VarSpec, str], ...]


def _text(op: str, var: VarSpec, lenient: bool) -> str:
    """A regex for one variable's text. Lazy: a variable takes as little as it can, so the
    separator after it goes to the next one, and the URI's end to the last."""
    if op in ("+", "#"):
        if var.prefix is None:
            # reserved expansion: anything, whole characters first. Each alternative excludes the
            # others where they start (the lookaheads): with two ways to read "%41" a URI of n
            # triplets that fails to match would cost 2**n steps (ReDoS, found in review).
            return rf"(?:{_PCT_CHAR}|(?!{_PCT_CHAR})\S)*?"
        # §2.4.1: at most N characters; a reserved character's %XX is kept, so it counts 3.
        char = rf"(?!(?i:{_RESERVED_TRIPLET.pattern})){_PCT_CHAR}"
        return rf"(?:{char}|(?!{char})\S){{0,{var.prefix}}}?"
    allowed = (_LENIENT if lenient else _STRICT)[op] + ("/" if var.explode and op == "/" else "")
    if var.prefix is None:
        # whole UTF-8 characters first; a lone %XX only where no whole character starts (one way
        # to read each triplet: see the reserved case above)
        return f"(?:[{allowed}]|{_PCT_CHAR}|(?!{_PCT_CHAR}){_PCT})*?"
    return f"(?:[{allowed}]|{_PCT_CHAR}){{0,{var.prefix}}}?"  # §2.4.1: at most N characters


def _at_least_one(text: str) -> str:
    return text[: -len("*?")] + "+?" if text.endswith("*?") else text.replace("{0,", "{1,", 1)


@lru_cache(maxsize=4096)
def _compile(template: str, lenient: bool) -> tuple[re.Pattern[str], Groups]:
    pattern: list[str] = []
    groups: list[tuple[str, VarSpec, str]] = []
    for part in parse_template(template).parts:
        if isinstance(part, str):
            pattern.append(re.escape(part))
            continue
        op = part.operator
        if op in ("?", "&"):
            query = f"g{len(groups)}"
            groups.extend((query, var, "query") for var in part.variables)
            # The first pair names one of the expression's variables (any name for an exploded
            # map: "{?keys*}" is "?semi=%3B&dot=."); pairs it does not name are ignored.
            names = "|".join(re.escape(v.name) for v in part.variables)
            first = r"[^#=&]+" if any(v.explode for v in part.variables) else f"(?:{names})"
            pattern.append(rf"(?:{re.escape(op)}(?P<{query}>{first}=[^#]*))?")
            continue
        pieces = []
        for i, var in enumerate(part.variables):
            group = f"g{len(groups)}"
            text = _text(op, var, lenient)
            if op == ";":
                groups.append((group, var, "named"))
                # ";x=" is no expansion: an empty value is ";x" (§3.2.7), so "=" needs a value.
                named = rf"(?P<{group}>;{re.escape(var.name)})(?:=(?P<{group}v>{_at_least_one(text)}))?"
                if var.explode:  # a list or a map of pairs, ";x=a;x=b" or ";k=v;j=w", comes last:
                    # after ";x=v" and after no x at all (which lets a later variable take ";y")
                    pair = f"[{_LENIENT[';']};]|{_PCT}"
                    pieces.append(rf"(?:{named}|(?:;(?P<{group}e>(?:{pair})*?))??)")
                else:
                    pieces.append(f"(?:{named})?")
                continue
            groups.append((group, var, "reserved" if op in ("+", "#") else "value"))
            if op in (".", "/"):
                pieces.append(rf"(?:{re.escape(op)}(?P<{group}>{text}))?")
            else:  # "," only after a variable that is there (§3.2.2: undefined ones leave no trace)
                comma = "".join(f"(?({g}),|" for g, _, _ in reversed(groups[len(groups) - i - 1 : -1]))
                pieces.append(rf"(?:{comma}{')' * i}(?P<{group}>{text}))?")
        body = "".join(pieces)
        pattern.append(rf"(?:\#{body})?" if op == "#" else body)
    return re.compile("".join(pattern), re.DOTALL), tuple(groups)


# -- which template serves a URI -----------------------------------------------------------------
def precedence(template: str) -> tuple[int, int, str]:
    """The sort key of ``serving_template``: most literal characters, fewest variables, text."""
    parsed = parse_template(template)
    return (-parsed.literal_length, len(parsed.variables), template)


@lru_cache(maxsize=256)
def _ordered(templates: tuple[str, ...]) -> tuple[str, ...]:
    valid = []
    for template in templates:
        try:
            parse_template(template)
        except TemplateSyntaxError:
            continue  # matches nothing
        valid.append(template)
    return tuple(sorted(valid, key=precedence))


def serving_template(templates: Iterable[str], uri: str) -> tuple[str, dict[str, str]] | None:
    """The template of ``templates`` that serves ``uri`` (see the module docstring) and the
    variables it reads, or None when none matches."""
    for template in _ordered(tuple(templates)):
        variables = parse_template(template).match(uri)
        if variables is not None:
            return template, variables
    return None
