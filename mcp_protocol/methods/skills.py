"""``skills/list``, ``skills/get`` and ``resources/directory/read``: the extension
``io.modelcontextprotocol/skills`` (SEP-2640), served from the snapshot's skills.

- ``skills/list`` pages whole entries ("An entry is atomic — a skill's ``resources`` set is never
  split across pages"); its wire form is cached per snapshot like every list (``listing.py``).
- ``skills/get`` answers for any skill the caller may see, and -32602 for any other URI (the SEP
  names -32602, "the same code ``resources/read`` uses for unknown resources").
- ``resources/directory/read`` lists a directory's direct children; a URI that is not a directory
  (a file, or nothing) is -32602 ("Directory Listing").

What is outside the caller's grant is as unknown as what does not exist (``auth/scopes.py``).
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidParams
from ..skills import Skill
from .base import Call, require_str
from .listing import list_page


def _key(skill: Skill) -> str:
    return skill.uri


def _wire(skill: Skill, version: str) -> dict[str, Any]:
    return skill.to_wire()


async def list_skills(call: Call) -> dict[str, Any]:
    return list_page(call, "skills", "skills", call.snapshot.skills, _key, _wire)


async def get_skill(call: Call) -> dict[str, Any]:
    uri = require_str(call.params, "uri")
    skill = call.snapshot.skill_index.skill(uri) if call.snapshot.skills else None
    if skill is None:
        raise InvalidParams(f"Not a skill: {uri}", {"uri": uri})
    return {"skill": skill.to_wire()}


def _child_key(child: dict[str, Any]) -> str:
    return str(child["uri"])


async def read_directory(call: Call) -> dict[str, Any]:
    uri = require_str(call.params, "uri")
    children = call.snapshot.skill_index.directory(uri) if call.snapshot.skills else None
    if children is None:
        raise InvalidParams(f"Not a directory resource: {uri}", {"uri": uri})
    page, next_cursor = call.server.paginator.page(
        "directory", children, _child_key, call.params.get("cursor")
    )
    result: dict[str, Any] = {"resources": list(page)}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result
