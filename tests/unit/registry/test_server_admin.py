"""The virtual servers' admin (issue 39 item 7): the list with what each server serves and its
URL, the add and change forms (unknown names refused on their field), the preview of each
revision's lists with the URL to copy, and the history of its edits."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from registry.models import Prompt, Tool, VirtualServer

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object", "properties": {}}


@pytest.fixture
def registry(db: None) -> None:
    Tool.objects.create(name="lookup", title="Look up", kind="template", template_text="hi",
                        input_schema=SCHEMA, tags=["support"])
    Tool.objects.create(name="secret", kind="template", template_text="hi", input_schema=SCHEMA,
                        tags=["support", "internal"])
    Tool.objects.create(name="off", kind="template", template_text="hi", input_schema=SCHEMA, enabled=False)
    Prompt.objects.create(name="greet", title="Greet")


def server_form(**overrides: Any) -> dict[str, str]:
    data: dict[str, Any] = {
        "slug": "support", "name": "support-desk", "title": "Support desk", "server_version": "1.2.0",
        "description": "", "instructions": "Be kind.", "icons": [], "website_url": "", "enabled": "on",
        "tools": [], "resources": [], "resource_templates": [], "prompts": ["greet"], "skills": [],
        "include_tags": ["support"], "exclude_tags": ["internal"], "auth_modes": [], "api_keys": [],
        "oauth_scopes": [], "rate_limit": "", "tool_search": "off", "tool_search_threshold": "50",
        "search_tool_name": "search_tools", "call_tool_name": "call_tool",
    }
    data.update(overrides)
    return {k: json.dumps(v) if isinstance(v, list) else v for k, v in data.items()}


def test_adding_a_server_refuses_unknown_names_on_their_field_then_saves(
    admin_client: Client, registry: None
) -> None:
    url = reverse("admin:registry_virtualserver_add")
    assert admin_client.get(url).status_code == 200
    bad = admin_client.post(url, server_form(slug="admin", tools=["ghost"], auth_modes=["magic"]))
    assert bad.status_code == 200
    errors = bad.context["adminform"].form.errors
    assert set(errors) == {"slug", "tools", "auth_modes"}
    assert "No tool named &#x27;ghost&#x27; in the registry or in code." in bad.content.decode()
    assert not VirtualServer.objects.exists()
    saved = admin_client.post(url, server_form())
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    row = VirtualServer.objects.get(slug="support")
    assert (row.server_version, row.prompts, row.include_tags) == ("1.2.0", ["greet"], ["support"])


def test_the_list_shows_what_each_server_serves_and_its_url(admin_client: Client, registry: None) -> None:
    VirtualServer.objects.create(slug="support", name="s", include_tags=["support"],
                                 exclude_tags=["internal"], prompts=["greet"])
    VirtualServer.objects.create(slug="empty", name="e", tools=["off"])
    page = admin_client.get(reverse("admin:registry_virtualserver_changelist"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "1 tool, 1 prompt" in html and "nothing" in html  # "off" is disabled: not served
    assert "<code>http://testserver/mcp/support</code>" in html
    searched = admin_client.get(reverse("admin:registry_virtualserver_changelist") + "?q=empty")
    assert "/mcp/empty" in searched.content.decode() and "/mcp/support" not in searched.content.decode()


def test_the_change_page_links_the_preview_and_offers_the_url_to_copy(
    admin_client: Client, registry: None
) -> None:
    row = VirtualServer.objects.create(slug="support", name="s", include_tags=["support"])
    page = admin_client.get(reverse("admin:registry_virtualserver_change", args=[row.pk]))
    html = page.content.decode()
    assert reverse("admin:registry_virtualserver_preview", args=[row.pk]) in html
    assert '<code id="endpoint-url">http://testserver/mcp/support</code>' in html
    assert 'data-copy="endpoint-url"' in html and "registry/copy-url.js" in html
    assert "<script>" not in re.sub(r"<script[^>]*src=[^>]*>", "", html)  # no inline script
    assert "2 tools" in html  # "Serves now": lookup and secret (nothing excluded here)
    assert "served at /mcp/&lt;slug&gt;." in html and "skill://&lt;path&gt;" in html  # not eaten as tags
    changed = admin_client.post(reverse("admin:registry_virtualserver_change", args=[row.pk]),
                                server_form(opened_version=str(row.version)))
    assert changed.status_code == 302
    row.refresh_from_db()
    assert row.version == 2 and row.exclude_tags == ["internal"]


def test_the_preview_shows_each_revision_lists_as_a_client_gets_them(
    admin_client: Client, registry: None
) -> None:
    row = VirtualServer.objects.create(
        slug="support", name="support-desk", title="Support desk", server_version="3.0.0",
        instructions="Be kind.", tools=["off"], include_tags=["support"], exclude_tags=["internal"],
        prompts=["greet"], enabled=False)
    page = admin_client.get(reverse("admin:registry_virtualserver_preview", args=[row.pk]))
    assert page.status_code == 200
    revisions = {item["revision"]: json.loads(item["json"]) for item in page.context["revisions"]}
    assert list(revisions) == ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    newest, oldest = revisions["2026-07-28"], revisions["2024-11-05"]
    assert newest["serverInfo"] == {"name": "support-desk", "version": "3.0.0", "title": "Support desk"}
    assert oldest["serverInfo"] == {"name": "support-desk", "version": "3.0.0"}  # title is 2025-06-18's
    assert newest["instructions"] == oldest["instructions"] == "Be kind."
    assert [t["name"] for t in newest["tools/list"]] == ["lookup"]  # secret excluded, off disabled
    assert newest["tools/list"][0]["title"] == "Look up" and "execution" in newest["tools/list"][0]
    assert "title" not in oldest["tools/list"][0] and "execution" not in oldest["tools/list"][0]
    assert [p["name"] for p in oldest["prompts/list"]] == ["greet"]
    assert newest["resources/list"] == [] and newest["resources/templates/list"] == []
    html = page.content.decode()
    assert '<code id="endpoint-url">http://testserver/mcp/support</code>' in html
    assert "answers 404 until the server is enabled" in html
    assert "tools: off" in html  # named, not served


def test_the_history_page_lists_the_versions_of_a_server(admin_client: Client, registry: None) -> None:
    row = VirtualServer.objects.create(slug="support", name="s")
    row.title = "Support"
    row.save()
    page = admin_client.get(reverse("admin:registry_virtualserver_history", args=[row.pk]))
    assert page.status_code == 200
    assert "Support" in page.content.decode()


# -- tool search (issue 41) -------------------------------------------------------------------------
def test_the_preview_lists_the_meta_tools_and_pins_in_search_mode_and_ranks_a_search(
    admin_client: Client, registry: None
) -> None:
    Tool.objects.create(name="weather", description="Today's weather forecast", kind="template",
                        template_text="sunny", input_schema=SCHEMA, tags=["support"], always_load=True)
    row = VirtualServer.objects.create(slug="support", name="s", include_tags=["support"],
                                       exclude_tags=["internal"], tool_search="on", search_tool_name="find")
    url = reverse("admin:registry_virtualserver_preview", args=[row.pk])
    page = admin_client.get(url, {"q": "weather forecast"})
    revisions = {item["revision"]: json.loads(item["json"]) for item in page.context["revisions"]}
    newest = revisions["2026-07-28"]["tools/list"]
    assert [t["name"] for t in newest] == ["find", "call_tool", "weather"]
    assert newest[2]["_meta"] == {"anthropic/alwaysLoad": True}
    hits = page.context["hits"]
    assert hits[0][0] == "weather" and hits[0][1] > 0
    assert "secret" not in [name for name, _, _ in admin_client.get(url, {"q": "hi"}).context["hits"]]
    html = page.content.decode()
    assert '<table id="search-hits">' in html and "<code>weather</code>" in html
    # Auto above a threshold the selection does not pass: every tool listed.
    row.tool_search, row.tool_search_threshold = "auto", 5
    row.save()
    newest = json.loads(admin_client.get(url).context["revisions"][0]["json"])["tools/list"]
    assert [t["name"] for t in newest] == ["lookup", "weather"]


def test_the_form_refuses_two_meta_tools_of_one_name(admin_client: Client, registry: None) -> None:
    url = reverse("admin:registry_virtualserver_add")
    bad = admin_client.post(url, server_form(tool_search="on", call_tool_name="search_tools"))
    assert set(bad.context["adminform"].form.errors) == {"call_tool_name"}
    bad = admin_client.post(url, server_form(search_tool_name="has space"))
    assert set(bad.context["adminform"].form.errors) == {"search_tool_name"}
