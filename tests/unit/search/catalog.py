"""The relevance set's catalog and queries (tests/fixtures/search/), loaded as Tools."""

from __future__ import annotations

import json
import pathlib
from functools import lru_cache
from typing import Any

from mcp_protocol.definitions import Tool

FIXTURES = pathlib.Path(__file__).parents[2] / "fixtures" / "search"


@lru_cache(maxsize=1)
def tools() -> tuple[Tool, ...]:
    raw = json.loads((FIXTURES / "catalog.json").read_text())
    return tuple(Tool(name=t["name"], title=t["title"], description=t["description"],
                      input_schema=t["inputSchema"], tags=tuple(t["tags"])) for t in raw)


@lru_cache(maxsize=1)
def queries() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads((FIXTURES / "queries.json").read_text())["queries"])
