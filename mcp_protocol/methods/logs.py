"""``logging/setLevel`` ([L] server/utilities/logging.mdx). Filtering itself is ``Context.log``.

An unknown level is -32602 (``context.level_rank`` raises it). 2026-07-28 has no such method: the
level travels in each request's ``_meta`` and ``server.py`` reads it there.
"""

from __future__ import annotations

from typing import Any

from ..context import level_rank
from .base import Call, require_str


async def set_level(call: Call) -> dict[str, Any]:
    level = require_str(call.params, "level")
    level_rank(level)
    if call.session.log_level != level:
        call.session.log_level = level
        call.session.mark_dirty()
    return {}
