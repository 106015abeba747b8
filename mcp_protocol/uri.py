"""RFC 3986 URI syntax, the one check both the protocol (resources/read, server/resources.mdx:
servers MUST validate resource URIs) and the registry (a stored resource's URI) apply."""

from __future__ import annotations

import re

# RFC 3986 §3 "URI = scheme ":" hier-part [ "?" query ] [ "#" fragment ]", split as in its
# Appendix B, with each part held to its own character set (§2: unreserved, sub-delims,
# pct-encoded). Nothing outside printable ASCII is allowed: spaces, controls and non-ASCII text
# must be percent-encoded (RFC 3986 is not RFC 3987 IRIs; the schema says ``@format uri``).
_PCT = r"%[0-9A-Fa-f]{2}"
_UNRESERVED_SUB = r"A-Za-z0-9\-._~!$&'()*+,;="
_PCHAR = rf"(?:[{_UNRESERVED_SUB}:@]|{_PCT})"
_URI = re.compile(
    rf"""
    [A-Za-z][A-Za-z0-9+.\-]*:                                    # scheme
    (?:
        //(?:(?:[{_UNRESERVED_SUB}:]|{_PCT})*@)?                  # authority: userinfo
        (?:\[[0-9A-Fa-f:.vV{_UNRESERVED_SUB}]+\]|(?:[{_UNRESERVED_SUB}]|{_PCT})*)  # host
        (?::[0-9]*)?                                             # port
        (?:/{_PCHAR}*)*                                          # path-abempty
      | (?!//)(?:{_PCHAR}|/)*                                    # path without authority
    )
    (?:\?(?:{_PCHAR}|[/?])*)?                                    # query
    (?:\#(?:{_PCHAR}|[/?])*)?                                    # fragment
    """,
    re.VERBOSE,
)


def uri_problem(uri: str) -> str | None:
    """Why ``uri`` is not an RFC 3986 URI (a phrase for an error message), or None if it is."""
    if not uri:
        return "it is empty"
    bad = next((c for c in uri if not (0x21 <= ord(c) <= 0x7E)), None)
    if bad is not None:
        return f"character {bad!r} must be percent-encoded"
    if not re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", uri):
        return 'it has no scheme (RFC 3986 §3.1: scheme ":" …)'
    if _URI.fullmatch(uri) is None:
        return "it is not an RFC 3986 URI (a reserved character in the wrong place or a bad %-escape)"
    return None
