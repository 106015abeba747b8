"""The admin in a real browser (issue 31 items 3 and 5), against one real server process with the
demo registry: Debian's chromium, headless, driven by Playwright (``tests/support/browser.py``).

1. A prompt's arguments and messages fit a 1280 px window (nothing wider than the page, measured
   in the browser); "Add another" gives a new argument the next position; dragging a row by its
   handle reorders the rows and renumbers them, and the saved prompt keeps that order.
2. The JSON editor flags invalid JSON as it is typed, before leaving the field or saving.
3. "Live MCP sessions" lists the session of a real MCP client (the official SDK's), and
   "End session" ends it: the client's next request is refused and the row is gone.
4. The home page and the MCP JSON preview read in dark mode (the system's colour scheme).

Screenshots of each page go to ``test-artifacts/browser/`` (gitignored; ``MCPSITE_SCREENSHOTS``
moves it), named ``admin-*.png``.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.live_server import ROOT

SHOTS = Path(os.environ.get("MCPSITE_SCREENSHOTS") or ROOT / "test-artifacts" / "browser")
WIDTH, HEIGHT = 1280, 900
WAIT = 20.0
USERNAME = "admin-browser"

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (scripts/test.sh installs it)"),
]


@pytest.fixture(scope="module")
def password() -> str:
    return secrets.token_urlsafe(12)


@pytest.fixture(scope="module")
def live(password: str) -> Iterator[LiveServer]:
    env = {"DJANGO_SUPERUSER_USERNAME": USERNAME, "DJANGO_SUPERUSER_PASSWORD": password}
    server = LiveServer(provider=REGISTRY_PROVIDER, load=[["load_demo"], ["ensure_admin"]], env=env)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def page(live: LiveServer, password: str) -> AsyncIterator[Any]:
    """A signed-in admin page, 1280 px wide."""
    from playwright.async_api import async_playwright

    await asyncio.to_thread(SHOTS.mkdir, parents=True, exist_ok=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            tab = await browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            tab.set_default_timeout(WAIT * 1000)
            await tab.goto(f"{live.base_url}/admin/login/?next=/admin/")
            await tab.fill("#id_username", USERNAME)
            await tab.fill("#id_password", password)
            await tab.click("input[type=submit]")
            await tab.wait_for_url(f"{live.base_url}/admin/")
            yield tab
        finally:
            await browser.close()


async def overflow(page: Any) -> dict[str, Any]:
    """How far the page and its inlines reach past the window, in CSS pixels (0: they fit)."""
    return await page.evaluate(
        """() => {
            const width = document.documentElement.clientWidth;
            const groups = [...document.querySelectorAll('.inline-group')];
            return {
                page: document.documentElement.scrollWidth - width,
                inlines: groups.map(g => Math.max(0, Math.ceil(g.getBoundingClientRect().right) - width,
                                                  g.scrollWidth - g.clientWidth)),
                groups: groups.length,
            };
        }"""
    )


async def positions(page: Any, group: str) -> list[tuple[str, str]]:
    """(name, position) of each argument row, in page order."""
    rows = await page.eval_on_selector_all(
        f"#{group} .inline-related:not(.empty-form)",
        "rows => rows.map(r => [r.querySelector('input[name$=-name]').value,"
        " r.querySelector('input.mcp-position').value])",
    )
    return [(name, position) for name, position in rows]


async def test_prompt_inlines_fit_1280_px_and_reorder_by_dragging(page: Any, live: LiveServer) -> None:
    await page.goto(f"{live.base_url}/admin/registry/prompt/?name=code_review")
    await page.click("#result_list a:text-is('code_review')")
    await page.wait_for_selector("#arguments-group .mcp-drag-handle")
    measured = await overflow(page)
    assert measured["groups"] == 2 and measured["page"] <= 0 and measured["inlines"] == [0, 0], measured
    await page.screenshot(path=str(SHOTS / "admin-1-prompt-inlines-1280.png"), full_page=True)
    assert await positions(page, "arguments-group") == [("language", "0"), ("code", "1"), ("focus", "2")]

    # A new row gets the next position.
    await page.click("#arguments-group .add-row a")
    rows = await positions(page, "arguments-group")
    assert rows[-1] == ("", "3"), rows
    await page.fill(
        "#arguments-group .inline-related:not(.empty-form) >> nth=3 >> input[name$=-name]", "tone"
    )
    assert (await overflow(page))["page"] <= 0

    # Drag "focus" above "language": every row renumbered as it now stands.
    # A window tall enough to show both rows: Playwright's drag does not scroll mid-drag.
    await page.set_viewport_size({"width": WIDTH, "height": 3200})
    handles = page.locator("#arguments-group .inline-related:not(.empty-form) .mcp-drag-handle")
    await handles.nth(2).drag_to(handles.nth(0))
    assert await positions(page, "arguments-group") == [
        ("focus", "0"),
        ("language", "1"),
        ("code", "2"),
        ("tone", "3"),
    ]
    await page.screenshot(path=str(SHOTS / "admin-2-prompt-reordered.png"), full_page=True)
    await page.click("input[name=_continue]")
    await page.wait_for_selector(".messagelist .success")
    assert [name for name, _ in await positions(page, "arguments-group")] == [
        "focus",
        "language",
        "code",
        "tone",
    ]


async def test_the_json_editor_flags_invalid_json_as_it_is_typed(page: Any, live: LiveServer) -> None:
    await page.goto(f"{live.base_url}/admin/registry/tool/add/")
    schema = page.locator("#id_input_schema")
    await schema.fill("")
    await schema.press_sequentially('{"type": "object", "properties": ')
    note = page.locator("#id_input_schema_json_note")
    assert "Invalid JSON" in await note.inner_text()
    assert await schema.get_attribute("aria-invalid") == "true"
    assert await page.evaluate("document.activeElement.id") == "id_input_schema"  # still typing
    await page.screenshot(path=str(SHOTS / "admin-3-json-editor-invalid.png"), full_page=True)
    await schema.press_sequentially("{}}")
    assert await note.inner_text() == "" and await schema.get_attribute("aria-invalid") is None


async def test_the_sessions_page_lists_a_real_client_and_ends_its_session(
    page: Any, live: LiveServer
) -> None:
    from mcp import types
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    name = f"browser-test-client-{secrets.token_hex(3)}"
    async with (
        streamable_http_client(live.url, terminate_on_close=False) as (read, write),
        ClientSession(read, write, client_info=types.Implementation(name=name, version="7.1")) as mcp,
    ):
        await asyncio.wait_for(mcp.initialize(), WAIT)
        assert (await asyncio.wait_for(mcp.list_tools(), WAIT)).tools
        await page.goto(f"{live.base_url}/admin/")
        # click returns once the navigation commits and count() does not wait: wait for the page
        # to have loaded before counting rows (CI, stop 48, counted a table not yet parsed).
        await page.click("a:text-is('Live sessions')")
        await page.wait_for_load_state()
        row = page.locator("#live-sessions tr", has_text=name)
        await row.first.wait_for(timeout=WAIT * 1000)
        assert await row.count() == 1
        assert "7.1" in await row.inner_text()
        await page.screenshot(path=str(SHOTS / "admin-4-live-sessions.png"), full_page=True)
        await row.locator("input[value='End session']").click()
        await page.wait_for_selector(".messagelist .success")
        await page.wait_for_load_state()
        assert await page.locator("#live-sessions tbody tr").count() >= 1  # the table is there
        assert await page.locator("#live-sessions tr", has_text=name).count() == 0
        await page.screenshot(path=str(SHOTS / "admin-5-session-ended.png"), full_page=True)
        with pytest.raises(Exception) as refused:  # the server no longer knows the session
            await asyncio.wait_for(mcp.list_tools(), WAIT)
        assert not isinstance(refused.value, TimeoutError), refused.value


async def test_the_home_page_and_the_preview_read_in_dark_mode(page: Any, live: LiveServer) -> None:
    await page.emulate_media(color_scheme="dark")

    async def colours(selector: str) -> tuple[float, float]:
        """The luminance (0 dark to 1 light) of the element's text and of its background."""
        return tuple(
            await page.eval_on_selector(
                selector,
                """e => {
            const lum = c => { const [r, g, b] = c.match(/[0-9.]+/g).map(Number);
                               return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; };
            const clear = n => getComputedStyle(n).backgroundColor === 'rgba(0, 0, 0, 0)';
            let bg = e; while (bg.parentElement && clear(bg)) bg = bg.parentElement;
            return [lum(getComputedStyle(e).color), lum(getComputedStyle(bg).backgroundColor)];
        }""",
            )
        )

    await page.goto(f"{live.base_url}/")
    for selector in ("body", "#mcp-url", "pre"):
        text, background = await colours(selector)
        assert background < 0.3 and text - background > 0.4, (selector, text, background)
    await page.screenshot(path=str(SHOTS / "admin-6-home-dark.png"), full_page=True)
    await page.goto(f"{live.base_url}/admin/registry/tool/?name=echo")
    await page.click("#result_list a:text-is('echo')")
    await page.wait_for_selector(".field-mcp_preview pre")
    text, background = await colours(".field-mcp_preview pre")
    assert background < 0.3 and text - background > 0.4, (text, background)
    await page.screenshot(path=str(SHOTS / "admin-7-preview-dark.png"), full_page=True)
