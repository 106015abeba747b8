"""A virtual server in the admin, in a real browser (chromium, driven by Playwright), against one
real server process with the demo registry (issue 39 item 7): a server added through the form
(an unknown tool refused on its field first), its URL copied by the change page's copy button
(``static/registry/copy-url.js``), and its preview listing the tool it names, per revision, with
the same copy button.

Screenshots go to ``test-artifacts/browser/`` (gitignored; ``MCPSITE_SCREENSHOTS`` moves it),
named ``servers-*.png``.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from pathlib import Path

import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer, live_server_fixture
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.live_server import ROOT

SHOTS = Path(os.environ.get("MCPSITE_SCREENSHOTS") or ROOT / "test-artifacts" / "browser")
USERNAME, PASSWORD = "servers-admin", secrets.token_urlsafe(12)

pytestmark = [
    pytest.mark.timeout(180),  # a migrated database and chromium, on a shared machine
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (scripts/test.sh installs it)"),
]
live = live_server_fixture(
    provider=REGISTRY_PROVIDER,
    load=[["load_demo"], ["ensure_admin"]],
    env={"DJANGO_SUPERUSER_USERNAME": USERNAME, "DJANGO_SUPERUSER_PASSWORD": PASSWORD},
)


async def test_a_server_added_in_the_admin_has_its_url_copied_and_its_lists_previewed(
    live: LiveServer,
) -> None:
    from playwright.async_api import async_playwright

    await asyncio.to_thread(SHOTS.mkdir, parents=True, exist_ok=True)
    site = live.base_url
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = await browser.new_context()
            await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
            page = await context.new_page()
            await page.goto(f"{site}/admin/login/?next=/admin/registry/virtualserver/add/")
            await page.fill("#id_username", USERNAME)
            await page.fill("#id_password", PASSWORD)
            await page.click("input[type=submit]")
            await page.wait_for_url(f"{site}/admin/registry/virtualserver/add/")

            # 1. An unknown tool is refused on its field; the demo's "echo" is taken.
            await page.fill("#id_slug", "support")
            await page.fill("#id_name", "support-desk")
            await page.fill("#id_title", "Support desk")
            await page.fill("#id_tools", json.dumps(["echo", "ghost"]))
            await page.click("input[name=_continue]")
            await page.locator(".errorlist", has_text="No tool named 'ghost'").wait_for()
            await page.screenshot(path=str(SHOTS / "servers-1-unknown-tool.png"), full_page=True)
            await page.fill("#id_tools", json.dumps(["echo"]))
            await page.click("input[name=_continue]")
            await page.locator(".messagelist", has_text="was added successfully").wait_for()

            # 2. The change page's copy button puts the endpoint's absolute URL on the clipboard.
            url = f"{site}/mcp/support"
            assert (await page.locator("#endpoint-url").inner_text()).strip() == url
            await page.click("[data-copy=endpoint-url]")
            await page.locator("[data-copy-done=endpoint-url]", has_text="Copied.").wait_for()
            assert await page.evaluate("navigator.clipboard.readText()") == url
            await page.screenshot(path=str(SHOTS / "servers-2-change-page.png"), full_page=True)

            # 3. The preview: the newest revision open, its tools/list the tool named, with a title.
            await page.click("text=Preview")
            newest = page.locator("#revision-2026-07-28 pre")
            listed = json.loads(await newest.inner_text())
            assert [t["name"] for t in listed["tools/list"]] == ["echo"]
            assert listed["serverInfo"]["title"] == "Support desk"
            oldest = json.loads(await page.locator("#revision-2024-11-05 pre").text_content() or "")
            assert "title" not in oldest["serverInfo"]  # serverInfo.title is 2025-06-18's
            await page.evaluate("navigator.clipboard.writeText('')")
            await page.click("[data-copy=endpoint-url]")
            await page.locator("[data-copy-done=endpoint-url]", has_text="Copied.").wait_for()
            assert await page.evaluate("navigator.clipboard.readText()") == url
            await page.screenshot(path=str(SHOTS / "servers-3-preview.png"), full_page=True)
        finally:
            await browser.close()
