"""examples/shopdesk, an existing Django project that installs mcpsite as a dependency.

The wheel of ``pip install`` carries the apps' templates, static files, fixtures, migrations and
management commands, not only their modules.

The project is copied out of the checkout and run with an interpreter that imports ``registry``,
``mcp_protocol`` and ``mcp_django`` from the wheel built here and installed into a fresh
virtualenv (its other dependencies come from the test venv through a ``.pth`` line: the wheel is
what is under test, and this keeps the module at seconds, not a full install). Then: its checks
pass, ``migrate`` and ``load_demo`` run from the installed apps, and under daphne the official SDK
client lists and calls the project's two code tools and a database tool at ``/internal/mcp`` and
hears an admin edit as ``list_changed``; its own websocket route still answers; ``runserver``
reloads when the project's tools change.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support import LiveServer
from tests.support.admin_client import log_in, submit_change
from tests.support.mcp_http import open_session, request, session_headers
from tests.support.websocket import exchange
from tests.support.wheel import ROOT, build_wheel

pytestmark = pytest.mark.timeout(240)
EXAMPLE = ROOT / "examples" / "shopdesk"
ADMIN = {
    "DJANGO_SUPERUSER_USERNAME": "boss",
    "DJANGO_SUPERUSER_PASSWORD": "example-pw",
    "DJANGO_SUPERUSER_EMAIL": "boss@example.com",
}


@dataclass
class Installed:
    python: str
    site_packages: Path
    project: Path
    wheel_names: set[str]

    def server(self, **kwargs: Any) -> LiveServer:
        env = {"DJANGO_SETTINGS_MODULE": "shopdesk.settings", "MCP_KEEPALIVE_SECONDS": "1", **ADMIN}
        return LiveServer(
            app="shopdesk.asgi:application",
            project_dir=self.project,
            python=self.python,
            mcp_path="/internal/mcp",
            env=env,
            **kwargs,
        )

    def run(self, *argv: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            [self.python, *argv],
            cwd=cwd or self.project,
            capture_output=True,
            text=True,
            timeout=120,
            env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}
            | (env or {}),
        )
        assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    work = tmp_path_factory.mktemp("example")
    wheel = build_wheel(work)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        timeout=120,
    )
    # The dependencies, not mcpsite: the test venv's editable install is a .pth file there, and
    # .pth files of a directory added this way are not processed.
    (site / "test-venv-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    project = work / "shopdesk"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", "*.sqlite3"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    yield Installed(python, site, project, names)


@pytest.fixture(scope="module")
def live(installed: Installed) -> Iterator[LiveServer]:
    # daphne: uvicorn here has no websocket library, and the project's websocket route is tested.
    server = installed.server(server="daphne", load=[["load_demo"], ["createsuperuser", "--noinput"]]).start()
    try:
        yield server
    finally:
        server.stop()


def test_the_wheel_carries_the_apps_non_python_files(installed: Installed) -> None:
    expected = {
        p.relative_to(ROOT).as_posix()
        for folder in ("registry/templates", "registry/static", "registry/fixtures")
        for p in (ROOT / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert expected and expected <= installed.wheel_names
    assert {
        "mcp_protocol/py.typed",
        "mcp_django/py.typed",
        "registry/migrations/0001_initial.py",
        "mcp_django/routing.py",
        "mcp_django/management/commands/mcp_stdio.py",
    } <= installed.wheel_names
    development = ("tests/", "bench/", "examples/", "scripts/")
    assert not [n for n in installed.wheel_names if n.startswith(development) or n.endswith(".sqlite3")]


def test_the_apps_come_from_the_installed_wheel_and_the_checks_pass(installed: Installed) -> None:
    where = installed.run(
        "-c",
        "import registry, mcp_protocol as p, mcp_django as d; "
        "print(registry.__file__, p.__file__, d.__file__)",
    )
    assert where.count(str(installed.site_packages)) == 3, where
    checked = installed.run("manage.py", "check", env={"DJANGO_SETTINGS_MODULE": "shopdesk.settings"})
    assert "no issues" in checked


class ListChanged:
    """Set when the SDK client hears ``notifications/tools/list_changed``."""

    def __init__(self) -> None:
        self.changed = asyncio.Event()


@asynccontextmanager
async def connect(url: str, heard: ListChanged) -> AsyncIterator[ClientSession]:
    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.changed.set()

    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            yield session


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def test_the_sdk_client_lists_and_calls_code_and_database_tools(live: LiveServer) -> None:
    heard = ListChanged()
    async with connect(live.url, heard) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"order_status", "staff_count", "echo"} <= set(tools)
        assert tools["order_status"].description == "Where an order is."
        assert tools["order_status"].input_schema["required"] == ["order_id"]
        assert tools["order_status"].output_schema is not None
        status = await session.call_tool("order_status", {"order_id": 1001})
        assert not status.is_error
        assert status.structured_content == {"order_id": 1001, "status": "shipped", "carrier": "PostNord"}
        missing = await session.call_tool("order_status", {"order_id": 7})
        assert missing.is_error and _text(missing) == "No order 7"
        staff = await session.call_tool("staff_count", {})
        assert staff.structured_content == {"result": 1}  # the superuser, counted through the ORM
        echoed = await session.call_tool("echo", {"message": "from the database"})
        assert "from the database" in _text(echoed)


async def test_an_admin_edit_reaches_the_sdk_client_as_list_changed(live: LiveServer) -> None:
    heard = ListChanged()
    script = "from registry.models import Tool; print(Tool.objects.get(name='echo').pk)"
    pk = await asyncio.to_thread(live.manage, "shell", "-c", script)
    async with connect(live.url, heard) as session:
        await session.list_tools()
        async with httpx.AsyncClient(base_url=live.base_url, timeout=10) as browser:
            await log_in(
                browser, live.base_url, ADMIN["DJANGO_SUPERUSER_USERNAME"], ADMIN["DJANGO_SUPERUSER_PASSWORD"]
            )
            saved = await submit_change(
                browser,
                f"/admin/registry/tool/{pk.split()[-1]}/change/",
                description="Edited in the shopdesk admin",
            )
            assert saved.status_code == 302, saved.text[:2000]
        async with asyncio.timeout(20):
            await heard.changed.wait()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert tools["echo"].description == "Edited in the shopdesk admin"


async def test_the_admin_shows_the_projects_code_tools_read_only(live: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=live.base_url, timeout=10) as browser:
        await log_in(
            browser, live.base_url, ADMIN["DJANGO_SUPERUSER_USERNAME"], ADMIN["DJANGO_SUPERUSER_PASSWORD"]
        )
        page = (await browser.get("/admin/registry/tool/")).text
    assert "Defined in code (read-only)" in page and "orders.mcp_handlers.order_status" in page


async def test_the_projects_own_websocket_route_still_answers(live: LiveServer) -> None:
    reply = await exchange(live.host, live.port, "/ws/orders/", "1002")
    assert reply == '{"order": "1002", "status": "packing"}'


async def test_runserver_reloads_when_the_projects_tools_change(installed: Installed) -> None:
    server = installed.server(server="runserver", migrate=True, startup_timeout=60.0).start()
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            handlers = installed.project / "orders" / "mcp_handlers.py"
            original = handlers.read_text()
            handlers.write_text(
                original + '\n\n@tool\ndef ping() -> str:\n    """Added while running."""\n'
                "    return 'pong'\n"
            )
            try:
                names: set[str] = set()
                # A restart is a new process (Django setup, system checks, daphne): generous, since
                # the whole suite may be running beside it on two cores.
                async with asyncio.timeout(100):
                    while "ping" not in names:  # the autoreloader restarts the server process
                        # The reloader's first look at the files can come after the server already
                        # answers (it runs in another thread), and a change it saw first is no
                        # change: so the mtime moves on again until a restart shows the new tool.
                        later = time.time() + 2
                        os.utime(handlers, (later, later))
                        await asyncio.sleep(1.0)
                        try:
                            session_id = await open_session(client, server.url)
                            listed = await client.post(
                                server.url, headers=session_headers(session_id), json=request(1, "tools/list")
                            )
                            names = {t["name"] for t in listed.json()["result"]["tools"]}
                        except (httpx.TransportError, AssertionError):
                            continue  # between the old process and the new one
            except TimeoutError:
                log = server.log_text()[-4000:]
                raise AssertionError(f"no reload within 100 s; server log:\n{log}") from None
            finally:
                handlers.write_text(original)
    finally:
        server.stop()
