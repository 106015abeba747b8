"""A new API key's secret page in a real browser (chromium, driven by Playwright), against a real
uvicorn worker with ``MCP_AUTH=keys``: the secret is shown once with a copy button that copies
it; reloading the page shows the key's own page, without the secret and without a second key;
the key's Revoke button, once confirmed, revokes it, and ``/mcp`` then refuses it.

Screenshots go to ``test-artifacts/browser/`` (gitignored; ``MCPSITE_SCREENSHOTS`` moves it),
as tests/integration/test_ops_browser.py does.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
from pathlib import Path

import httpx
import pytest

from tests.support import MEMORY_PROVIDER, LiveServer, live_server_fixture
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.live_server import ROOT
from tests.support.mcp_http import POST_HEADERS, initialize_message
from tests.support.polling import eventually

SHOTS = Path(os.environ.get("MCPSITE_SCREENSHOTS") or ROOT / "test-artifacts" / "browser")
USERNAME, PASSWORD = "keys-admin", secrets.token_urlsafe(12)
TOKEN = re.compile(r"^mcp_[0-9a-f]{8}_[A-Za-z0-9_-]{43}$")

pytestmark = [
    pytest.mark.timeout(180),  # a migrated database and chromium, on a shared machine
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (scripts/test.sh installs it)"),
]
live = live_server_fixture(
    provider=MEMORY_PROVIDER,
    load=[["ensure_admin"]],
    env={"MCP_AUTH": "keys", "DJANGO_SUPERUSER_USERNAME": USERNAME, "DJANGO_SUPERUSER_PASSWORD": PASSWORD},
)


async def initialize_status(live: LiveServer, token: str) -> int:
    async with httpx.AsyncClient(timeout=10) as client:
        headers = {**POST_HEADERS, "authorization": f"Bearer {token}"}
        return (await client.post(live.url, headers=headers, json=initialize_message())).status_code


async def test_the_secret_is_shown_once_copied_not_shown_on_reload_and_the_key_revoked(
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
            await page.goto(f"{site}/admin/login/?next=/admin/access/apikey/add/")
            await page.fill("#id_username", USERNAME)
            await page.fill("#id_password", PASSWORD)
            await page.click("input[type=submit]")
            await page.wait_for_url(f"{site}/admin/access/apikey/add/")

            # 1. A new key: its secret on the page that answers the save, with a copy button.
            await page.fill("#id_name", "browser key")
            await page.click("input[name=_save]")
            token = (await page.locator("#secret").inner_text()).strip()
            assert TOKEN.match(token), token
            await page.click("#copy-secret")
            await page.locator("#copy-done", has_text="Copied.").wait_for()
            assert await page.evaluate("navigator.clipboard.readText()") == token
            await page.screenshot(path=str(SHOTS / "keys-1-secret-shown-once.png"), full_page=True)
            assert await initialize_status(live, token) == 200  # the copied secret works

            # 2. Reloading shows the key's own page: no secret, and no second key made.
            await page.reload()
            await page.wait_for_selector("#apikey_form")
            assert re.search(r"/admin/access/apikey/\d+/change/$", page.url), page.url
            assert token not in await page.content()
            await page.screenshot(path=str(SHOTS / "keys-2-after-reload.png"), full_page=True)
            await page.goto(f"{site}/admin/access/apikey/")
            assert await page.locator("#result_list tbody tr").count() == 1

            # 3. The key's Revoke button, confirmed: revoked, and /mcp refuses the key.
            await page.click("text=browser key")
            await page.click("#revoke-key")
            await page.screenshot(path=str(SHOTS / "keys-3-revoke-confirmation.png"), full_page=True)
            await page.click("#confirm-revoke")
            await page.locator(".messagelist", has_text="is revoked").wait_for()
            assert await page.locator("#revoke-key").count() == 0
            assert (await page.locator(".field-revoked_at .readonly").inner_text()).strip() not in ("", "-")
            await page.screenshot(path=str(SHOTS / "keys-4-revoked.png"), full_page=True)

            async def refused() -> bool:
                return await initialize_status(live, token) == 401

            await eventually(refused, seconds=10)
            await page.goto(f"{site}/admin/access/apikey/?status=revoked")
            assert await page.locator("#result_list tbody tr").count() == 1
        finally:
            await browser.close()
