"""The registry served over stdio to the official ``mcp`` SDK client: a tool added through the
ORM in another process reaches the client as ``notifications/tools/list_changed`` (through the
Redis bus), and the next ``tools/list`` shows it.

Beside a server with no Redis (each process with a bus of its own), the change made in the
server's admin reaches the client through the database (``registry/changes/reconcile.py``).

Real parts only: a SQLite database file, ``manage.py migrate`` + ``load_demo``, the real
``mcp_stdio`` command as a subprocess, a separate ``manage.py shell`` process for the change, and
the real Redis at 127.0.0.1:6379 (keys under a random prefix). Every wait has a deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.admin_client import form_errors, log_in, submit_change
from tests.support.manage import ROOT, ManageSession, manage
from tests.support.migrated import sqlite_copy
from tests.support.shared_redis import REDIS_URL, require_redis

PYTHON = (
    str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable
)
DEADLINE = 90.0

ADD_TOOL = (
    "from registry.models import Tool; "
    "t = Tool(name='added_by_orm', description='Added from another process', kind='template', "
    "template_text='added: {{ x }}', "
    "input_schema={'type': 'object', 'properties': {'x': {'type': 'string'}}}); "
    "t.full_clean(); t.save()"
)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    require_redis()
    values = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'registry.db'}",
        "REDIS_URL": REDIS_URL,
        "MCP_KEY_PREFIX": f"test-registry-{secrets.token_hex(6)}",
        "MCP_PROVIDER": "registry.provider.RegistryProvider",
        "DJANGO_SETTINGS_MODULE": "mcpsite.settings",
        "PYTHONUNBUFFERED": "1",
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(tmp_path)),
    }
    # Migrated: a copy of the run's template (migrated.py), not a migrate of its own.
    sqlite_copy(tmp_path / "registry.db", values, python=PYTHON)
    manage(values, "load_demo", inherit=False, python=PYTHON)
    return values


async def test_sdk_client_sees_a_tool_added_through_the_orm_after_list_changed(env: dict[str, str]) -> None:
    changed = asyncio.Event()
    seen: list[Any] = []

    async def on_message(message: Any) -> None:
        seen.append(message)
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    params = StdioServerParameters(command=PYTHON, args=["manage.py", "mcp_stdio"], env=env, cwd=str(ROOT))
    async with asyncio.timeout(DEADLINE):
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            init = await session.initialize()
            assert init.capabilities.tools is not None and init.capabilities.tools.list_changed

            before = [t.name for t in (await session.list_tools()).tools]
            assert "echo" in before and "added_by_orm" not in before
            echoed = await session.call_tool("echo", {"message": "from the registry"})
            assert echoed.content[0].text == "from the registry"

            await asyncio.to_thread(manage, env, "shell", "-c", ADD_TOOL, inherit=False, python=PYTHON)
            await asyncio.wait_for(changed.wait(), 20)

            after = (await session.list_tools()).tools
            assert "added_by_orm" in [t.name for t in after]
            result = await session.call_tool("added_by_orm", {"x": "yes"})
            assert result.content[0].text == "added: yes" and not result.is_error


def bare_env(tmp_path: Path) -> dict[str, str]:
    """A fresh SQLite file nobody migrated; no Redis needed (the failure comes before the bus)."""
    return {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'never-migrated.db'}",
        "MCP_PROVIDER": "registry.provider.RegistryProvider",
        "DJANGO_SETTINGS_MODULE": "mcpsite.settings",
        "PYTHONUNBUFFERED": "1",
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(tmp_path)),
    }


async def run_stdio(env: dict[str, str], *args: str, stdin: bytes = b"") -> tuple[int, bytes, str]:
    process = await asyncio.create_subprocess_exec(
        PYTHON,
        "manage.py",
        "mcp_stdio",
        *args,
        cwd=ROOT,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin), 120)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, out, err.decode()


async def test_mcp_stdio_on_an_unmigrated_database_fails_fast_with_one_line_naming_the_fix(
    tmp_path: Path,
) -> None:
    code, out, err = await run_stdio(bare_env(tmp_path))
    assert code == 1
    assert out == b""  # nothing that is not an MCP message on stdout
    assert "Traceback" not in err
    [line] = err.strip().splitlines()
    assert "no such table: registry_tool" in line
    assert "manage.py migrate" in line and "mcp_stdio --prepare" in line


async def test_mcp_stdio_prepare_migrates_a_fresh_database_and_serves(tmp_path: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
    }
    code, out, err = await run_stdio(
        bare_env(tmp_path), "--prepare", stdin=json.dumps(initialize).encode() + b"\n"
    )
    assert code == 0, err
    assert json.loads(out.splitlines()[0])["result"]["serverInfo"]["name"] == "mcpsite"


async def test_mcp_stdio_beside_a_server_with_no_redis_gets_list_changed_for_an_admin_edit(
    tmp_path: Path,
) -> None:
    """The first-run setup: a server and a local client's ``mcp_stdio``, one SQLite database, each
    with its own in-memory bus. The edit saved in the server's admin reaches the stdio client from
    the database (registry/changes/reconcile.py), within the reconcile interval."""
    password = secrets.token_hex(12)
    # REDIS_URL empty: both processes run on memory stores and a memory bus.
    with LiveServer(provider=REGISTRY_PROVIDER, load="load_demo", env={"REDIS_URL": ""}) as server:
        admin = ["createsuperuser", "--noinput", "--username", "ops", "--email", "ops@example.com"]
        with ManageSession({**server.env, "DJANGO_SUPERUSER_PASSWORD": password}, inherit=False) as run:
            run(*admin)  # one Django start-up for both commands
            echo_pk = run(
                "shell", "-c", "from registry.models import Tool; print(Tool.objects.get(name='echo').pk)"
            )
        changed = asyncio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                changed.set()

        env = {**server.env, "REGISTRY_RECONCILE_SECONDS": "0.5"}
        params = StdioServerParameters(
            command=PYTHON, args=["manage.py", "mcp_stdio"], env=env, cwd=str(ROOT)
        )
        async with (
            asyncio.timeout(DEADLINE),
            stdio_client(params) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
            httpx.AsyncClient(timeout=30) as browser,
        ):
            await session.initialize()
            assert "echo" in [t.name for t in (await session.list_tools()).tools]
            await log_in(browser, server.base_url, "ops", password)
            url = f"{server.base_url}/admin/registry/tool/{echo_pk.split()[-1]}/change/"
            saved = await submit_change(browser, url, description="Edited in the admin")
            assert saved.status_code == 302, form_errors(saved.text)
            await asyncio.wait_for(changed.wait(), 10)
            [echo] = [t for t in (await session.list_tools()).tools if t.name == "echo"]
            assert echo.description == "Edited in the admin"
