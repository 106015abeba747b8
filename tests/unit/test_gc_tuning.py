"""The worker's GC is tuned at startup (``transports/gc_tuning.py``), so a project that routes to
``mcp_path`` gets it without its own ``asgi.py`` doing anything, and ``GC_THRESHOLD = None``
leaves it alone. Each case runs the service's ``startup()`` in a fresh interpreter: the test process's
own GC is not touched. Frozen objects are counted from the start of the script (Python 3.12
already reports a few hundred at startup)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SCRIPT = """
import asyncio, gc, json, django
django.setup()
from mcp_django.service import get_service
before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
async def main():
    service = get_service()
    await service.startup()
    started = service.ready()
    await service.shutdown()
    return started
started = asyncio.run(main())
print(json.dumps({"before": before, "after": gc.get_threshold(), "started": started,
                  "frozen": gc.get_freeze_count() - frozen_before}))
"""


def start(**env: str) -> dict[str, object]:
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "mcpsite.settings", "REDIS_URL": "",
               "MCP_PROVIDER": "mcp_protocol.memory_provider.MemoryProvider", **env}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=environ, capture_output=True,
                         text=True, timeout=60, check=True)
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.timeout(120)
def test_startup_freezes_what_it_built_and_raises_the_young_threshold() -> None:
    result = start()
    assert result["started"] is True
    assert result["before"] == [700, 10, 10]
    assert result["after"] == [50_000, 20, 100]
    # Django, the apps and the runtime: tens of thousands of objects out of every collection.
    assert isinstance(result["frozen"], int) and result["frozen"] > 10_000


@pytest.mark.timeout(120)
def test_a_project_that_tunes_its_own_gc_turns_it_off() -> None:
    result = start(MCP_GC_THRESHOLD="")
    assert result["started"] is True
    assert result["after"] == result["before"] and result["frozen"] == 0
