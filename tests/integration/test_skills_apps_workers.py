"""Skills and Apps across workers, with real clients: two uvicorn workers on one database and a
private Redis (``tests/support/fleets.py``), the fixture skill set (``load_skills``) and the demo
registry (its ``greeting_card`` tool with an app).

1. The official SDK client on worker B lists skills (``skills/list``: raw JSON-RPC on the SDK's
   session, the SDK has no method for it), reads a ``SKILL.md`` and a binary file, and subscribes
   to the ``SKILL.md``.
2. In chromium, the admin on worker A edits that skill's body: the client on B receives
   ``notifications/resources/updated`` for it and reads the new text.
3. The tool's app preview in the admin renders in a sandboxed iframe whose CSP blocks a domain
   the view did not declare (a ``securitypolicyviolation`` for ``connect-src``).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import running_fleet
from tests.support.mcp_http import modern_headers, modern_message
from tests.support.private_redis import have_redis_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT = 20.0
SKILL_MD = "skill://git-workflow/SKILL.md"
LOGO = "skill://pdf-processing/assets/logo.png"
FIXTURE = Path(__file__).resolve().parents[2] / "registry" / "fixtures" / "skills"

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium"),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server"),
]


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, LiveServer, str, str]]:
    base = tmp_path_factory.mktemp("skills-fleet")
    username, password = "skills-admin", secrets.token_urlsafe(12)
    with running_fleet(base, provider=REGISTRY_PROVIDER, database_url=f"sqlite:///{base / 'db.sqlite3'}",
                       keepalive=1.0) as fleet:
        fleet.migrate()
        fleet.manage_all(["load_demo"], ["load_skills"], ["ensure_admin"],
                         DJANGO_SUPERUSER_USERNAME=username, DJANGO_SUPERUSER_PASSWORD=password)
        a, b = fleet.start(2)
        yield a, b, username, password


class Listener:
    def __init__(self) -> None:
        self.updated: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            await self.updated.put(str(root.params.uri))


async def test_skills_and_apps_across_workers(workers: tuple[LiveServer, LiveServer, str, str]) -> None:
    from mcp import types
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from playwright.async_api import async_playwright

    a, b, username, password = workers
    listener = Listener()
    async with (
        streamable_http_client(b.url) as (read, write),
        ClientSession(read, write, message_handler=listener.on_message) as mcp,
        async_playwright() as playwright,
    ):
        init = await mcp.initialize()
        declared = init.capabilities.model_dump(by_alias=True, exclude_none=True)
        assert declared["extensions"]["io.modelcontextprotocol/skills"] == {"directoryRead": True}, declared

        # 1. List, read SKILL.md and a binary file (digests as listed), subscribe.
        # skills/list: the SDK has no method for it; a 2026-07-28 request on the same worker.
        message = modern_message(1, "skills/list")
        async with httpx.AsyncClient(timeout=WAIT) as http:
            answer = await http.post(b.url, headers=modern_headers(message), json=message)
        assert answer.status_code == 200, answer.text
        skills = {s["uri"]: s for s in answer.json()["result"]["skills"]}
        assert set(skills) >= {SKILL_MD, "skill://pdf-processing/SKILL.md", "skill://acme/billing/refunds/SKILL.md"}
        digests = {r["uri"]: r["digest"] for r in skills["skill://pdf-processing/SKILL.md"]["resources"]}
        text = (await mcp.read_resource(SKILL_MD)).contents[0]
        assert isinstance(text, types.TextResourceContents) and "name: git-workflow" in text.text
        blob = (await mcp.read_resource(LOGO)).contents[0]
        assert isinstance(blob, types.BlobResourceContents)
        raw = base64.b64decode(blob.blob)
        assert raw == (FIXTURE / "pdf-processing/assets/logo.png").read_bytes()
        assert digests[LOGO] == "sha256:" + hashlib.sha256(raw).hexdigest()
        await mcp.subscribe_resource(SKILL_MD)

        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                   args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            await page.goto(f"{a.base_url}/admin/login/?next=/admin/")
            await page.fill("#id_username", username)
            await page.fill("#id_password", password)
            await page.click("input[type=submit]")
            await page.wait_for_url(f"{a.base_url}/admin/")

            # 2. Edit the skill on worker A; the client on B hears of it and reads the change.
            await page.goto(f"{a.base_url}/admin/registry/skill/?q=git-workflow")
            await page.click("text=git-workflow")
            await page.fill("#id_body", "\n# Git workflow\n\nRebase before merging.\n")
            await page.click("input[name=_save]")
            await page.wait_for_load_state()
            errors = await page.locator(".errornote, ul.errorlist").all_inner_texts()
            assert page.url.startswith(f"{a.base_url}/admin/registry/skill/?"), errors
            assert await asyncio.wait_for(listener.updated.get(), WAIT) == SKILL_MD
            changed = (await mcp.read_resource(SKILL_MD)).contents[0]
            assert isinstance(changed, types.TextResourceContents)
            assert "Rebase before merging." in changed.text

            # 3. The tool's app preview: sandboxed, and its CSP blocks an undeclared domain.
            await page.goto(f"{a.base_url}/admin/registry/tool/?q=greeting_card")
            await page.click("text=greeting_card")
            frame_element = page.locator("iframe.mcp-app-preview")
            assert await frame_element.get_attribute("sandbox") == "allow-scripts"
            frame = await (await frame_element.element_handle()).content_frame()  # type: ignore[union-attr]
            assert frame is not None
            await frame.wait_for_selector("#greeting")
            assert await frame.inner_text("#greeting") == "Hello!"
            violation = await frame.evaluate("""() => new Promise((resolve) => {
                document.addEventListener("securitypolicyviolation",
                    (e) => resolve(e.effectiveDirective + " " + e.blockedURI), {once: true});
                fetch("https://undeclared.example/data").catch(() => {});
                setTimeout(() => resolve("no violation"), 5000);
            })""")
            assert violation.startswith("connect-src https://undeclared.example"), violation
            cookie = await frame.evaluate("() => { try { return document.cookie; } catch { return '-'; } }")
            assert cookie in ("", "-")  # an opaque origin: none of the admin's cookies
        finally:
            await browser.close()
