"""Debian's chromium (``/usr/bin/chromium``; Playwright cannot download a browser here), headless,
with the flags this machine's closed network needs (/work/.library/env/machines/python-svc.md:
without them chromium keeps trying to reach Google's hosts), and a user signing in and consenting
on the built-in authorization server's pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


async def sign_in_and_consent(page: Any, url: str, username: str, password: str, redirect_prefix: str,
                              *, uncheck: tuple[str, ...] = ()) -> str:
    """Open the authorization ``url`` in ``page`` (a Playwright page), sign in if asked, untick the
    scopes in ``uncheck`` and allow; the URL the browser was sent back to (starting with
    ``redirect_prefix``, answered here: no client listens there)."""
    sent_back: list[str] = []

    async def capture(route: Any) -> None:
        sent_back.append(route.request.url)
        await route.fulfill(status=200, body="ok", content_type="text/plain")

    await page.route(f"{redirect_prefix}**", capture)
    await page.goto(url)
    if await page.locator("#id_username").count():
        await page.fill("#id_username", username)
        await page.fill("#id_password", password)
        await page.click("input[type=submit]")
    await page.wait_for_selector("#authorizationForm")
    for scope in uncheck:
        await page.uncheck(f"input[name=granted][value='{scope}']")
    await page.click("input[name=allow]")
    await page.wait_for_url(f"{redirect_prefix}**")
    assert sent_back, "the browser was not sent back to the client"
    return sent_back[-1]
