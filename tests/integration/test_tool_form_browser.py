"""The tool form in a real browser (issue 31 items 1 and 2): Debian's chromium driven by Playwright
against one live server with the demo and conformance registries.

1. The kind select shows only the chosen kind's fields; saving a switch of kind clears the other
   kinds' values (the demo's http example becomes a template tool: its URL is gone).
2. "Try it" on the add page runs the form before it is saved, with arguments entered in a form
   generated from the input schema being typed (text, number, boolean, enum, array, JSON for an
   object; required marks); nothing is saved and ``tools/list`` does not change.
3. A tool returning an image shows an image, not base64.

Screenshots go to ``test-artifacts/tool-form/`` (gitignored; ``MCPSITE_SCREENSHOTS`` moves it);
the test prints where.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.live_server import ROOT

SHOTS = Path(os.environ.get("MCPSITE_SCREENSHOTS") or ROOT / "test-artifacts" / "tool-form")
USERNAME, PASSWORD = "tool-form-browser", secrets.token_urlsafe(12)
SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "Where"},
        "days": {"type": "integer", "minimum": 1},
        "metric": {"type": "boolean"},
        "units": {"enum": ["C", "F"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "extra": {"type": "object"},
    },
    "required": ["city", "days"],
}
TEMPLATE = "{{ city }} for {{ days }} days, metric {{ metric }}, in {{ units }}, tags {{ tags }}, {{ extra }}"

pytestmark = [
    pytest.mark.timeout(300),  # four manage.py runs, then the browser, on a shared machine
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (scripts/test.sh installs it)"),
]


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    env = {"DJANGO_SUPERUSER_USERNAME": USERNAME, "DJANGO_SUPERUSER_PASSWORD": PASSWORD}
    server = LiveServer(
        provider=REGISTRY_PROVIDER, env=env, load=[["load_demo"], ["load_conformance"], ["ensure_admin"]]
    ).start()
    try:
        yield server
    finally:
        server.stop()


def listed_tools(live: LiveServer) -> list[str]:
    """``tools/list`` as a client sees it (a fresh session: initialize, then list)."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(timeout=10) as client:
        init = client.post(
            live.url,
            headers=headers,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "browser-test", "version": "1"},
                },
            },
        )
        session = {
            **headers,
            "Mcp-Session-Id": init.headers["Mcp-Session-Id"],
            "MCP-Protocol-Version": "2025-11-25",
        }
        client.post(live.url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        answer = client.post(
            live.url,
            headers={**session, "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        )
    text = answer.text
    if "text/event-stream" in answer.headers.get("content-type", ""):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return [tool["name"] for tool in json.loads(text)["result"]["tools"]]


async def shot(page: Any, name: str) -> None:
    await page.screenshot(path=str(SHOTS / name), full_page=True)


async def visible(page: Any, field: str) -> bool:
    return bool(await page.locator(f".form-row.field-{field}").is_visible())


async def test_the_tool_form_follows_its_kind_and_tries_unsaved_data_with_a_generated_arguments_form(
    live: LiveServer,
) -> None:
    from playwright.async_api import async_playwright

    await asyncio.to_thread(SHOTS.mkdir, parents=True, exist_ok=True)
    print(f"screenshots: {SHOTS}")
    site = live.base_url
    name = f"forecast_{uuid.uuid4().hex[:6]}"
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(15_000)
            await page.goto(f"{site}/admin/login/?next=/admin/")
            await page.fill("#id_username", USERNAME)
            await page.fill("#id_password", PASSWORD)
            await page.click("input[type=submit]")
            await page.wait_for_url(f"{site}/admin/")

            # 1. The kind's fields only.
            await page.goto(f"{site}/admin/registry/tool/add/")
            await page.select_option("#id_kind", "http")
            assert await visible(page, "http_url") and not await visible(page, "template_text")
            assert not await visible(page, "handler")
            await shot(page, "1-kind-http.png")
            await page.select_option("#id_kind", "handler")
            assert await visible(page, "handler") and not await visible(page, "http_url")
            handlers = await page.locator("#id_handler option").all_inner_texts()
            assert "demo.echo" in handlers
            await page.select_option("#id_kind", "template")
            assert await visible(page, "template_text") and not await visible(page, "http_method")
            await shot(page, "2-kind-template.png")

            # 2. Try it before saving, arguments from the schema being typed.
            await page.fill("#id_name", name)
            await page.fill("#id_template_text", TEMPLATE)
            await page.fill("#id_input_schema", json.dumps(SCHEMA))
            await page.locator("#id_input_schema").dispatch_event("change")
            args = page.locator("#try-args")
            await args.locator("#try-arg-city").wait_for()
            assert await args.locator("label[for=try-arg-city]").get_attribute("class") == "required"
            assert await args.locator("label[for=try-arg-metric]").get_attribute("class") is None
            assert await args.locator("#try-arg-days").get_attribute("type") == "number"
            assert await args.locator("#try-arg-units option").all_inner_texts() == ["---------", "C", "F"]
            assert await args.locator("#try-arg-metric option").all_inner_texts() == [
                "---------",
                "true",
                "false",
            ]
            assert await args.locator("#try-arg-tags").get_attribute("placeholder") == "one string per line"
            assert await args.locator("#try-arg-extra").get_attribute("placeholder") == "JSON"
            assert await args.locator("#try-arg-city").input_value() == ""  # no "" prefilled as a value
            await page.fill("#try-arg-city", "Lyon")
            await page.fill("#try-arg-days", "3")
            await page.select_option("#try-arg-metric", "true")
            await page.select_option("#try-arg-units", "C")
            await page.fill("#try-arg-tags", "sun\nwind")
            await page.fill("#try-arg-extra", '{"k": 1}')
            await shot(page, "3-arguments-form.png")
            await page.click("#try-run")
            text = page.locator("#try-blocks .try-block-text pre")
            await text.wait_for()
            expected = 'Lyon for 3 days, metric true, in C, tags ["sun", "wind"], {"k": 1}'
            assert await text.inner_text() == expected
            assert "not saved" in await page.locator("#try-note").inner_text()
            await page.locator("#try-it").scroll_into_view_if_needed()
            await shot(page, "4-try-unsaved.png")
            # A schema the tool's arguments break is reported, not run.
            await page.fill("#try-arg-days", "")
            await page.click("#try-run")
            await page.locator("#try-error").wait_for()
            assert "days" in await page.locator("#try-error").inner_text()
            # An unknown placeholder is a field error of the form, before any run.
            await page.fill("#id_template_text", "{{ nowhere }}")
            await page.click("#try-run")
            await page.locator(".try-field-error").wait_for()
            assert "does not define 'nowhere'" in await page.locator(".try-field-error").inner_text()
            await shot(page, "5-try-form-error.png")
            assert name not in listed_tools(live)  # nothing saved, nothing served

            # 1 again. Saving a switch of kind clears the other kind's fields.
            await page.goto(f"{site}/admin/registry/tool/?q=http_post_example")
            await page.click("text=http_post_example")
            assert await page.locator("#id_http_url").input_value() == "https://httpbin.org/anything"
            await page.select_option("#id_kind", "template")
            await page.fill("#id_template_text", "Not posted: {{ query }}")
            await page.click("input[name=_continue]")
            await page.locator(".messagelist .success").wait_for()
            assert await page.locator("#id_template_text").input_value() == "Not posted: {{ query }}"
            await page.select_option("#id_kind", "http")
            assert await page.locator("#id_http_url").input_value() == ""
            await shot(page, "6-kind-switch-saved.png")

            # 3. An image result is an image.
            await page.goto(f"{site}/admin/registry/tool/?q=test_image_content")
            await page.click("text=test_image_content")
            await page.click("#try-run")
            image = page.locator("#try-blocks img")
            await image.wait_for()
            assert await image.evaluate("img => img.complete && img.naturalWidth > 0")
            assert await page.locator("#try-result").is_hidden()  # the JSON, base64 shortened, folded
            assert "bytes of base64" in await page.locator("#try-result").text_content()
            await page.locator("#try-it").scroll_into_view_if_needed()
            await shot(page, "7-try-image.png")
        finally:
            await browser.close()
