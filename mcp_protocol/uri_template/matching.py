"""Matching a URI against a template's program (``program.py``), the inverse of expansion, in
time linear in the URI.

``Solver`` answers "can the rest of the program match from here?" once per (node, position) and
remembers it, so a URI of n characters costs at most O(nodes x n) steps whatever the template. A
backtracking regular expression of the same template costs O(n**k) on a URI it does not match
when k variables can share characters (``{a}.{b}.{c}``, ``{+a}/{+b}``, ``{x,y}``): seconds for
300 characters (ReDoS, found in review of issue 24's matcher). The path it reports is the one a
backtracking matcher would take (the program's choices are in that priority order).
"""

from __future__ import annotations

from .program import Choice, End, Lit, Mark, Node, Run


class Solver:
    """One URI against one program: each (node, position) decided once."""

    def __init__(self, nodes: list[Node], uri: str) -> None:
        self.nodes = nodes
        self.uri = uri
        self.can: dict[tuple[int, int], bool] = {}
        self.ends: dict[tuple[int, int], tuple[int, int]] = {}  # (run, at): (end, units) or (-1, 0)

    def captures(self) -> dict[str, str] | None:
        """What each group read on the match a backtracking matcher would find, or None."""
        node, at = len(self.nodes) - 1, 0
        if not self.completes(node, at):
            return None
        opened: dict[str, int] = {}
        read: dict[str, str] = {}
        while True:
            current = self.nodes[node]
            if isinstance(current, End):
                return read
            if isinstance(current, Lit):
                node, at = current.next, at + len(current.text)
            elif isinstance(current, Mark):
                if current.opens:
                    opened[current.group] = at
                else:
                    read[current.group] = self.uri[opened[current.group] : at]
                node = current.next
            elif isinstance(current, Choice):
                node = next(o for o in current.options if self.completes(o, at))
            else:
                node, at = current.next, self.run_end(node, current, at)

    def completes(self, node: int, at: int) -> bool:
        key = (node, at)
        known = self.can.get(key)
        if known is None:
            known = self.can[key] = self._completes(self.nodes[node], node, at)
        return known

    def _completes(self, current: Node, node: int, at: int) -> bool:
        if isinstance(current, End):
            return at == len(self.uri)
        if isinstance(current, Lit):
            return self.uri.startswith(current.text, at) and self.completes(
                current.next, at + len(current.text)
            )
        if isinstance(current, Mark):
            return self.completes(current.next, at)
        if isinstance(current, Choice):
            return any(self.completes(option, at) for option in current.options)
        return self.run_end(node, current, at) >= 0

    def run_end(self, node: int, run: Run, at: int) -> int:
        """Where ``run`` ends when it starts at ``at`` and the rest completes, or -1."""
        if run.extent is not None:
            match = run.extent.match(self.uri, at)
            end = match.end() if match is not None else at
            if end - at < run.least or not self.completes(run.next, end):
                return -1
            return end
        start = at
        for _ in range(run.least):
            start = run.step(self.uri, start)
            if start < 0:
                return -1
        end, units = self._nearest(node, run, start) if run.lazy else self._farthest(node, run, start)
        if end < 0 or (run.most is not None and units + run.least > run.most):
            return -1
        return end

    def _nearest(self, node: int, run: Run, at: int) -> tuple[int, int]:
        """The first position on the run from ``at`` where the rest completes, and the units to it.
        The positions a run reaches from ``at`` are one chain (a step has one next position), so
        what is known for a later position on it is known for every earlier one."""
        walked: list[int] = []
        found = (-1, 0)
        while at >= 0:
            known = self.ends.get((node, at))
            if known is not None:
                found = known
                break
            if self.completes(run.next, at):
                found = (at, 0)
                break
            walked.append(at)
            at = run.step(self.uri, at)
        end, units = found
        for back, position in enumerate(reversed(walked), start=1):
            self.ends[(node, position)] = (end, units + back) if end >= 0 else (-1, 0)
        if at >= 0:
            self.ends[(node, at)] = found
        return self.ends[(node, walked[0])] if walked else found

    def _farthest(self, node: int, run: Run, at: int) -> tuple[int, int]:
        """The last position on the run from ``at`` where the rest completes (greedy; a run
        without a bound counts no units)."""
        walked: list[int] = []
        found = (-1, 0)
        while at >= 0:
            known = self.ends.get((node, at))
            if known is not None:
                found = known
                break
            walked.append(at)
            at = run.step(self.uri, at)
        for position in reversed(walked):
            if found[0] < 0 and self.completes(run.next, position):
                found = (position, 0)
            self.ends[(node, position)] = found
        return found
