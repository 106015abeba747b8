"""What one variable's text may contain, per operator, read one unit at a time: the character
sets of the strict and lenient passes and the steps that read a character or a percent-encoded
triplet (RFC 6570 §3.2, §2.4.1 for prefixes). ``program.py`` builds its runs from these."""

from __future__ import annotations

import re
import string
from collections.abc import Callable

# One character of a variable's text, per operator: what its expansion writes (unreserved and
# %XX; reserved too for "+" and "#"), and in the lenient pass also the sub-delims, ":" and "@" a
# client may leave unencoded, except the operator's own delimiters. No pass lets "/" into "{/x}".
_U = string.ascii_letters + string.digits + "-._~"
STRICT = {"": _U, ".": _U, "/": _U, ";": _U}
LENIENT = {
    "": _U + "!$'()*+,;=:@",
    ".": _U + "!$&'()*+,=:@",
    "/": _U + "!$&'()*+,;=:@",
    ";": _U + "!$&'()*+,=:@",
}
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
# One decoded character as %XX triplets (UTF-8: 1 to 4 bytes), for prefixes ({x:3}) to count.
_PCT_CHAR = re.compile(
    r"%(?:[0-7][0-9A-Fa-f]|[CDcd][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]"
    r"|[Ee][0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f]){2}|[Ff][0-7](?:%[89ABab][0-9A-Fa-f]){3})"
)
RESERVED_TRIPLET = re.compile(
    "(" + "|".join(f"%{ord(c):02X}" for c in ":/?#[]@!$&'()*+,;=") + ")", re.IGNORECASE
)

# A step reads one unit of a variable's text at a position: the position after it, or -1.
Step = Callable[[str, int], int]


def text_step(allowed: str, percent: str) -> Step:
    """Units of ``allowed`` characters and percent-encoding: ``whole`` reads a UTF-8 character's
    triplets as one unit and a lone ``%XX`` where no character starts; ``chars`` only whole
    characters (a prefix counts characters, §2.4.1); ``triplets`` each ``%XX`` alone. Each
    triplet is read one way only, so a position has one next position."""
    chars = frozenset(allowed)

    def step(uri: str, at: int) -> int:
        if at >= len(uri):
            return -1
        if uri[at] in chars:
            return at + 1
        if uri[at] != "%":
            return -1
        if percent != "triplets":
            whole = _PCT_CHAR.match(uri, at)
            if whole is not None:
                return whole.end()
            if percent == "chars":
                return -1
        return at + 3 if _PCT.match(uri, at) else -1

    return step


def reserved_step(prefix: bool) -> Step:
    """Units of reserved expansion (§3.2.3): any character but whitespace, a UTF-8 character's
    triplets as one. Under a prefix a reserved character's ``%XX`` is kept as written, so it counts
    as three characters."""

    def step(uri: str, at: int) -> int:
        if at >= len(uri):
            return -1
        if uri[at] == "%":
            whole = _PCT_CHAR.match(uri, at)
            if whole is not None and not (prefix and RESERVED_TRIPLET.match(uri, at)):
                return whole.end()
        return at + 1 if not uri[at].isspace() else -1

    return step


def other_than(excluded: str) -> Step:
    def step(uri: str, at: int) -> int:
        return at + 1 if at < len(uri) and uri[at] not in excluded else -1

    return step

