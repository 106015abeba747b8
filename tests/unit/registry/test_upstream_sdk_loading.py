"""A worker loads the official ``mcp`` SDK only when it reaches an upstream (registry/upstreams/
handshake.py): importing the SDK builds every protocol model, about a second of each worker's and
each management command's start-up on the CI machine, which a deployment without upstreams never
needs. Checked in a fresh interpreter, as a worker starts: Django set up (the admin and the API
imported), the ASGI application, the provider and every upstream module the provider's start
imports (the keeper, the periodic sync, the calls); then the module that opens a session, which
must load it (else the first check would pass for a worker that had lost the SDK by mistake).
"""

from __future__ import annotations

import subprocess
import sys

from tests.support.manage import ROOT, manage_env

SCRIPT = """
import sys
import django
django.setup()
import mcpsite.asgi
import registry.provider
from registry.upstreams import acting, health, keeper, periodic, serve, sync, tasks
print(sorted(m for m in ("mcp", "mcp_types") if m in sys.modules))
from registry.upstreams import connect
print(sorted(m for m in ("mcp", "mcp_types") if m in sys.modules))
"""


def test_a_worker_imports_the_sdk_only_to_open_an_upstream_session() -> None:
    env = manage_env({"DATABASE_URL": "sqlite:///:memory:", "PYTHONPATH": str(ROOT)})
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.strip().splitlines()[-2:]
    assert before == "[]"
    assert after == "['mcp', 'mcp_types']"
