"""A template compiled for matching: a small program of literals, variable texts ("runs" of
the characters an operator writes, ``steps.py``), choices in priority order, and marks around what
a variable read (``compile_program``). ``matching.py`` runs it against a URI.

The priorities are those a backtracking matcher would follow, so the values read are the same:
a variable takes as little as it can (the separator after it goes to the next one, the URI's end
to the last), a present variable is tried before an absent one, and a query's text as much as it
can.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass

from .parts import Expression, Part, VarSpec
from .steps import LENIENT, STRICT, Step, other_than, reserved_step, text_step


@dataclass(frozen=True)
class End:
    pass


@dataclass(frozen=True)
class Lit:
    text: str
    next: int


@dataclass(frozen=True)
class Mark:
    """The start (``opens``) or end of what ``group`` read."""

    group: str
    opens: bool
    next: int


@dataclass(frozen=True)
class Choice:
    options: tuple[int, ...]  # in priority order


@dataclass(frozen=True)
class Run:
    step: Step
    next: int
    least: int = 0  # units
    most: int | None = None
    lazy: bool = True
    # The characters a unit starts with (None: any but whitespace), and the run's longest reach
    # from a position as one regular expression. ``extent`` is kept only for a run whose end is
    # forced (``_forced``): then the longest reach is the only end, found in one call.
    starts: frozenset[str] | None = frozenset()
    extent: re.Pattern[str] | None = None


Node = End | Lit | Mark | Choice | Run
# (group, variable, how to read it: "value" its text, "reserved" its text as {+x} wrote it,
# "named" a ";x=v" pair, "query" a query)
Groups = tuple[tuple[str, VarSpec, str], ...]


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[Node] = [End()]

    def add(self, node: Node) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def captured(self, group: str, inner: Callable[[int], int], then: int) -> int:
        """``inner`` (built towards its continuation) between the marks of ``group``."""
        return self.add(Mark(group, True, inner(self.add(Mark(group, False, then)))))


def _text(op: str, var: VarSpec, lenient: bool, then: int, b: _Builder, least: int = 0) -> int:
    if op in ("+", "#"):
        step = reserved_step(var.prefix is not None)
        return b.add(Run(step, then, least, var.prefix, starts=None, extent=_ANY_EXTENT))
    allowed = (LENIENT if lenient else STRICT)[op] + ("/" if var.explode and op == "/" else "")
    percent = "whole" if var.prefix is None else "chars"
    extent = re.compile(f"(?:[{re.escape(allowed)}]|%[0-9A-Fa-f]{{2}})*+")  # "whole" reads these
    starts = frozenset(allowed + "%")
    return b.add(Run(text_step(allowed, percent), then, least, var.prefix, starts=starts, extent=extent))


_ANY_EXTENT = re.compile(r"\S*+")
_END = ""  # in a set of first characters: the URI's end


def _first(nodes: list[Node], node: int) -> frozenset[str] | None:
    """The characters what starts at ``node`` can begin with (``_END``: it can match nothing at
    the URI's end), or None when a run can begin it (any character of the run)."""
    current = nodes[node]
    if isinstance(current, End):
        return frozenset(_END)
    if isinstance(current, Lit):
        return frozenset(current.text[0])
    if isinstance(current, Mark):
        return _first(nodes, current.next)
    if isinstance(current, Choice):
        found: set[str] = set()
        for option in current.options:
            first = _first(nodes, option)
            if first is None:
                return None
            found |= first
        return frozenset(found)
    return None


def _forced(nodes: list[Node]) -> list[Node]:
    """Runs whose end is forced keep their ``extent``: what follows one cannot begin with a
    character the run reads (a reserved run: only the URI's end follows it), so at any earlier
    position the rest fails at once and only the run's longest reach can end it. A bounded run
    (a prefix, ``{x:3}``) counts its units, so it steps."""
    forced: list[Node] = []
    for current in nodes:
        if isinstance(current, Run) and current.extent is not None:
            follow = _first(nodes, current.next)
            keep = current.most is None and current.lazy and follow is not None
            if keep and follow is not None:
                keep = follow == {_END} if current.starts is None else not (follow & current.starts)
            if not keep:
                current = dataclasses.replace(current, extent=None)
        forced.append(current)
    return forced


def _reader(op: str, var: VarSpec, lenient: bool, b: _Builder, least: int = 0) -> Callable[[int], int]:
    def build(then: int) -> int:
        return _text(op, var, lenient, then, b, least)

    return build


def compile_program(parts: tuple[Part, ...], lenient: bool) -> tuple[list[Node], Groups]:
    """The program of a template (its entry is the last node) and the groups it reads."""
    groups: list[tuple[str, VarSpec, str]] = []
    names: list[list[str]] = []  # per part, the group of each variable (numbered left to right)
    for part in parts:
        if isinstance(part, str):
            names.append([])
        elif part.operator in ("?", "&"):
            group = f"g{len(groups)}"
            groups.extend((group, var, "query") for var in part.variables)
            names.append([group])
        else:
            kind = {";": "named", "+": "reserved", "#": "reserved"}.get(part.operator, "value")
            start = len(groups)
            groups.extend((f"g{start + i}", var, kind) for i, var in enumerate(part.variables))
            names.append([f"g{start + i}" for i in range(len(part.variables))])
    b = _Builder()
    then = 0
    for part, part_groups in zip(reversed(parts), reversed(names), strict=True):
        if isinstance(part, str):
            then = b.add(Lit(part, then))
        else:
            then = _expression(part, part_groups, lenient, then, b)
    b.add(Choice((then,)))  # the entry, last
    return _forced(b.nodes), tuple(groups)


def _expression(part: Expression, groups: list[str], lenient: bool, then: int, b: _Builder) -> int:
    op = part.operator
    if op in ("?", "&"):
        return _query(part, groups[0], then, b)
    if op == ";":
        for var, group in zip(reversed(part.variables), reversed(groups), strict=True):
            then = _named(var, group, lenient, then, b)
        return then
    if op in (".", "/"):
        for var, group in zip(reversed(part.variables), reversed(groups), strict=True):
            read = b.captured(group, _reader(op, var, lenient, b), then)
            then = b.add(Choice((b.add(Lit(op, read)), then)))
        return then
    # "", "+", "#": "," only after a variable that is there (§3.2.2: undefined ones leave no
    # trace), so each variable has two entries: before any variable was read, and after one was.
    # Before any, an empty value reads as undefined (both expand to nothing, and a defined one
    # would make the next variable need a ","), except where the expression must have one: "#"
    # is written only when some variable is defined.
    some = then
    none_yet = then if op != "#" else b.add(Choice(()))
    for var, group in zip(reversed(part.variables), reversed(groups), strict=True):
        after_comma = b.captured(group, _reader(op, var, lenient, b), some)
        first = b.captured(group, _reader(op, var, lenient, b, 1), some)
        empty = b.captured(group, _nothing, some)
        some, none_yet = (
            b.add(Choice((b.add(Lit(",", after_comma)), some))),
            b.add(Choice((first, none_yet, empty))),
        )
    if op == "#":
        return b.add(Choice((b.add(Lit("#", none_yet)), then)))
    return none_yet


def _nothing(then: int) -> int:
    return then


def _query(part: Expression, group: str, then: int, b: _Builder) -> int:
    """``?x=..&..``: the first pair names one of the expression's variables (any name for an
    exploded map: ``{?keys*}`` is ``?semi=%3B&dot=.``); the rest of the URI up to ``#`` is read
    by name (``template._query_values``)."""

    def pairs(nxt: int) -> int:
        rest = b.add(Lit("=", b.add(Run(other_than("#"), nxt, lazy=False))))
        if any(v.explode for v in part.variables):
            return b.add(Run(other_than("#=&"), rest, least=1, lazy=False))
        return b.add(Choice(tuple(b.add(Lit(v.name, rest)) for v in part.variables)))

    return b.add(Choice((b.add(Lit(part.operator, b.captured(group, pairs, then))), then)))


def _named(var: VarSpec, group: str, lenient: bool, then: int, b: _Builder) -> int:
    """``;x`` (the empty value, §3.2.7) or ``;x=value``: ``;x=`` is no expansion, so ``=`` needs a
    value. An exploded list or map (``;x=a;x=b``, ``;k=v;j=w``) is read as its text, tried after
    ``;x=v`` and after no x at all (which lets a later variable take ``;y``)."""
    value = b.add(
        Choice(
            (
                b.add(Lit("=", b.captured(f"{group}v", _reader(";", var, lenient, b, 1), then))),
                then,
            )
        )
    )
    named = b.captured(group, lambda nxt: b.add(Lit(f";{var.name}", nxt)), value)
    if not var.explode:
        return b.add(Choice((named, then)))

    def pairs(nxt: int) -> int:
        # ";x=a;x=b" or ";k=v;j=w": pairs joined by ";", none empty (an empty list or map is
        # undefined and leaves no ";" at all, §3.2.1), so the text starts with a pair's character
        # and a ";" inside it is followed by one.
        rest = b.add(Run(_PAIRS, nxt))
        return b.add(Run(_PAIR_CHAR, rest, least=1, most=1))

    exploded = b.add(Lit(";", b.captured(f"{group}e", pairs, then)))
    return b.add(Choice((named, b.add(Choice((then, exploded))))))


_PAIR_CHAR = text_step(LENIENT[";"], "triplets")


def _pairs_step(uri: str, at: int) -> int:
    """One unit of pairs after their first character: a character, or ";" and the next one."""
    if at < len(uri) and uri[at] == ";":
        after = _PAIR_CHAR(uri, at + 1)
        return after if after >= 0 else -1
    return _PAIR_CHAR(uri, at)


_PAIRS: Step = _pairs_step

