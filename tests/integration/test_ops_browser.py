"""The admin in a real browser, through the nginx fleet, while an MCP client listens elsewhere.

Debian's chromium (``/usr/bin/chromium``; Playwright cannot download a browser here), headless,
driven by Playwright's Python package, against a production-like fleet: ``DJANGO_DEBUG=0``, static
files from ``collectstatic``, two uvicorn workers behind nginx (``mcpsite.fleet.Balancer``), and a
third worker C outside the balancer, all on one database and one private Redis. Meanwhile the
official SDK client holds its session (and its GET stream) on C, so the change crosses workers:

1. the landing page, then the admin login; the admin stylesheet loaded (200, and applied);
2. a new tool with an input schema that is valid JSON but not a valid JSON Schema: the form
   shows the error and nothing is saved; fixed, saved;
3. the client on C receives ``notifications/tools/list_changed``, finds the tool in
   ``tools/list`` and calls it;
4. the admin's "Try it" on the new tool shows the same result.

Screenshots of each page go to ``test-artifacts/browser/`` (gitignored; ``MCPSITE_SCREENSHOTS``
moves it).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcpsite.fleet import PLAIN_HTTP, Balancer
from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.fleets import running_fleet
from tests.support.live_server import ROOT
from tests.support.private_redis import have_redis_server

SHOTS = Path(os.environ.get("MCPSITE_SCREENSHOTS") or ROOT / "test-artifacts" / "browser")
WAIT = 20.0
BAD_SCHEMA = '{"type": "object", "properties": {"city": {"type": 5}}}'
GOOD_SCHEMA = '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}'

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (scripts/test.sh installs it)"),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server"),
]


@dataclass
class AdminSite:
    """The balancer in front of workers A and B, worker C outside it, and the admin's login."""

    balancer: Balancer
    c: LiveServer
    username: str
    password: str


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdminSite]:
    base = tmp_path_factory.mktemp("browser-fleet")
    username, password = "ops-browser", secrets.token_urlsafe(12)
    with running_fleet(
        base,
        provider=REGISTRY_PROVIDER,
        database_url=f"sqlite:///{base / 'db.sqlite3'}",
        keepalive=1.0,
        DJANGO_DEBUG="0",
        **PLAIN_HTTP,  # the balancer serves plain HTTP on loopback
        SECRET_KEY=secrets.token_urlsafe(40),
        DJANGO_STATIC_ROOT=str(base / "static"),
    ) as fleet:
        fleet.migrate()
        fleet.manage_all(["load_demo"], ["collectstatic", "--noinput", "--verbosity", "0"], ["ensure_admin"],
                         DJANGO_SUPERUSER_USERNAME=username, DJANGO_SUPERUSER_PASSWORD=password)
        a, b, c = fleet.start(3)
        yield AdminSite(fleet.balance(a, b), c, username, password)


class Listener:
    """The official SDK client on worker C, with its GET stream; records notifications."""

    def __init__(self) -> None:
        self.changed = asyncio.Event()

    async def on_message(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/tools/list_changed":
            self.changed.set()


async def test_a_tool_made_in_the_admin_through_nginx_reaches_a_client_on_another_worker(
    fleet: AdminSite,
) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from playwright.async_api import async_playwright

    await asyncio.to_thread(SHOTS.mkdir, parents=True, exist_ok=True)
    site = fleet.balancer.base_url
    tool_name = f"weather_{uuid.uuid4().hex[:6]}"
    listener = Listener()
    async with (
        streamable_http_client(fleet.c.url) as (read, write),
        ClientSession(read, write, message_handler=listener.on_message) as mcp,
        async_playwright() as playwright,
    ):
        await mcp.initialize()
        before = [t.name for t in (await mcp.list_tools()).tools]
        assert tool_name not in before
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = await browser.new_page()
            stylesheets: dict[str, int] = {}  # url → status of every stylesheet the pages loaded

            def seen(response: Any) -> None:
                if response.url.endswith(".css"):
                    stylesheets[response.url] = response.status

            page.on("response", seen)

            # 1. Landing page and login.
            await page.goto(f"{site}/")
            assert await page.locator("#mcp-url").inner_text() == f"{site}/mcp"
            await page.screenshot(path=str(SHOTS / "1-landing.png"), full_page=True)
            await page.goto(f"{site}/admin/login/?next=/admin/")
            await page.fill("#id_username", fleet.username)
            await page.fill("#id_password", fleet.password)
            await page.click("input[type=submit]")
            await page.wait_for_url(f"{site}/admin/")
            base_css = [url for url in stylesheets if "/static/admin/css/base." in url]
            assert base_css and all(stylesheets[url] == 200 for url in base_css), stylesheets
            # Applied, not just fetched: the header has the admin's colour, not the default.
            header_bg = await page.eval_on_selector("#header", "e => getComputedStyle(e).backgroundColor")
            assert header_bg not in ("", "rgba(0, 0, 0, 0)"), header_bg
            await page.screenshot(path=str(SHOTS / "2-admin-index.png"), full_page=True)

            # 2. A new tool: a bad input schema is refused with the validator's message.
            await page.goto(f"{site}/admin/registry/tool/add/")
            await page.fill("#id_name", tool_name)
            await page.fill("#id_description", "Weather for a city (made in the browser test).")
            await page.select_option("#id_kind", "template")
            await page.fill("#id_template_text", "Sunny in {{ city }}")
            await page.fill("#id_input_schema", BAD_SCHEMA)
            await page.click("input[name=_save]")
            errors = page.locator(".errornote, ul.errorlist")
            await errors.first.wait_for()
            field_error = await page.locator(".field-input_schema ul.errorlist").inner_text()
            assert "schema" in field_error.lower() or "type" in field_error.lower(), field_error
            await page.screenshot(path=str(SHOTS / "3-tool-bad-schema.png"), full_page=True)
            assert not listener.changed.is_set()  # nothing saved, nothing announced

            await page.fill("#id_input_schema", GOOD_SCHEMA)
            await page.click("input[name=_save]")
            await page.wait_for_url(f"{site}/admin/registry/tool/")
            assert tool_name in await page.locator(".messagelist .success").inner_text()
            await page.screenshot(path=str(SHOTS / "4-tool-saved.png"), full_page=True)

            # 3. The client on worker C hears of it, lists it and calls it.
            await asyncio.wait_for(listener.changed.wait(), WAIT)
            listed = {t.name: t for t in (await mcp.list_tools()).tools}
            assert listed[tool_name].input_schema["required"] == ["city"]
            called = await mcp.call_tool(tool_name, {"city": "Lyon"})
            assert not called.is_error and called.content[0].text == "Sunny in Lyon"

            # 4. "Try it" in the admin gives the same answer.
            await page.click(f"text={tool_name}")
            await page.click(".object-tools >> text=Try it")
            await page.fill("#try-arg-city", "Lyon")  # the arguments form made from the input schema
            await page.click("input[type=submit][value=Run]")
            result = await page.locator("#try-result").inner_text()
            assert "Sunny in Lyon" in result
            await page.screenshot(path=str(SHOTS / "5-try-it.png"), full_page=True)
        finally:
            await browser.close()
