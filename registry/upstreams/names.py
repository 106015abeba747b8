"""How a mirrored definition is named here: ``<prefix>_<name>`` (tools, prompts, and the display
names of resources and templates); resources keep their URI and templates their URI template.

A name that does not fit is refused with the reason, never shortened or renamed: a changed name
would break every client and selection that named it, and two upstream names shortened alike
would silently become one.
"""

from __future__ import annotations

NAME_MAX = 64  # the spec's recommended tool name length (2025-11-25 server/tools "Tool Names": 1-128,
# SHOULD be short); 64 also keeps every client that caps names at 64 (several LLM APIs do) working.


def mirrored_name(prefix: str, name: str) -> str:
    return f"{prefix}_{name}"


def name_problem(prefix: str, name: str) -> str | None:
    """Why the mirrored name of ``name`` cannot be used (None: it can)."""
    full = mirrored_name(prefix, name)
    if len(full) > NAME_MAX:
        return f"{full!r} is {len(full)} characters, past {NAME_MAX}: refused, not shortened"
    return None
