"""``/api/v1/servers/`` (issue 39 item 7): virtual servers by slug, with ETag and ``If-Match``, the
model's validation plus unknown names refused on their field, the endpoint's absolute URL and its
current members, model permissions, and the history of API edits."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from registry.code import definitions as code
from registry.models import ChangeSet, Prompt, Resource, Tool, VirtualServer
from registry.skills.loading import replace_skill

from .conftest import client_for, staff_with

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object", "properties": {}}
SERVER: dict[str, Any] = {
    "slug": "support",
    "name": "support-desk",
    "title": "Support desk",
    "version": "2.1.0",
    "instructions": "Look the customer up first.",
    "tools": ["lookup"],
    "resources": ["file:///faq.md"],
    "include_tags": ["support"],
    "exclude_tags": ["internal"],
    "auth_modes": ["keys", "oauth"],
    "rate_limit": "60/60",
}


def tool(name: str, tags: list[str] | None = None, enabled: bool = True) -> Tool:
    return Tool.objects.create(name=name, kind="template", template_text="hi", input_schema=SCHEMA,
                               tags=tags or [], enabled=enabled)


@pytest.fixture
def registry(db: None) -> None:
    tool("lookup")
    tool("refund", tags=["support"])
    tool("audit", tags=["support", "internal"])  # included by a tag, excluded by another: out
    tool("deploy")
    Resource.objects.create(uri="file:///faq.md", name="faq", text="# FAQ")
    Prompt.objects.create(name="greet", tags=["support"])


def test_create_read_patch_and_delete_by_slug_with_etags(api: APIClient, registry: None) -> None:
    created = api.post("/api/v1/servers/", SERVER, format="json")
    assert created.status_code == 201, created.json()
    assert created["ETag"] == '"1"'
    body = created.json()
    assert body["version"] == "2.1.0" and body["revision"] == 1
    assert VirtualServer.objects.get(slug="support").server_version == "2.1.0"
    assert body["url"] == "http://testserver/mcp/support"
    assert body["members"] == {"tools": ["lookup", "refund"], "resources": ["file:///faq.md"],
                               "resource_templates": [], "prompts": ["greet"], "skills": []}

    with override_settings(ALLOWED_HOSTS=["mcp.example.com"]):
        got = api.get("/api/v1/servers/support/", HTTP_HOST="mcp.example.com", secure=True)
    assert got.status_code == 200 and got["ETag"] == '"1"'
    assert got.json()["url"] == "https://mcp.example.com/mcp/support"  # the request's scheme and host
    assert {k: got.json()[k] for k in SERVER} == SERVER

    patched = api.patch("/api/v1/servers/support/", {"tools": ["lookup", "deploy"]}, format="json",
                        HTTP_IF_MATCH='"1"')
    assert patched.status_code == 200, patched.json()
    assert patched["ETag"] == '"2"' and patched.json()["members"]["tools"] == ["deploy", "lookup", "refund"]

    stale = api.patch("/api/v1/servers/support/", {"title": "late"}, format="json", HTTP_IF_MATCH='"1"')
    assert stale.status_code == 412
    assert VirtualServer.objects.get(slug="support").title == "Support desk"

    replaced = api.put("/api/v1/servers/support/", {**SERVER, "slug": "help"}, format="json",
                       HTTP_IF_MATCH='"2"')
    assert replaced.status_code == 200 and replaced.json()["url"] == "http://testserver/mcp/help"
    assert api.get("/api/v1/servers/support/").status_code == 404

    assert api.delete("/api/v1/servers/help/", HTTP_IF_MATCH='"2"').status_code == 412
    assert api.delete("/api/v1/servers/help/", HTTP_IF_MATCH='"3"').status_code == 204
    assert api.get("/api/v1/servers/help/").status_code == 404
    assert not VirtualServer.objects.exists()


def test_unknown_slug_is_404_on_every_method(api: APIClient) -> None:
    for method in ("get", "put", "patch", "delete"):
        answer = getattr(api, method)("/api/v1/servers/nope/", {"name": "x"}, format="json")
        assert answer.status_code == 404, method


def test_listing_is_filtered_ordered_and_shows_each_server_members(api: APIClient, registry: None) -> None:
    VirtualServer.objects.create(slug="b", name="b", tools=["deploy"])
    VirtualServer.objects.create(slug="a", name="a", include_tags=["support"], enabled=False)
    listing = api.get("/api/v1/servers/").json()
    assert listing["count"] == 2
    assert [(s["slug"], s["members"]["tools"]) for s in listing["results"]] == [
        ("a", ["audit", "refund"]), ("b", ["deploy"])]
    assert [s["slug"] for s in api.get("/api/v1/servers/?enabled=false").json()["results"]] == ["a"]
    assert [s["slug"] for s in api.get("/api/v1/servers/?ordering=-slug").json()["results"]] == ["b", "a"]
    assert api.get("/api/v1/servers/?enabled=maybe").status_code == 400


def test_a_page_of_servers_resolves_members_from_one_snapshot(
    api: APIClient, registry: None, django_assert_max_num_queries: Any
) -> None:
    for n in range(2):
        VirtualServer.objects.create(slug=f"s{n}", name="s", tools=["lookup"])
    with django_assert_max_num_queries(30) as few:
        api.get("/api/v1/servers/")
    for n in range(2, 30):
        VirtualServer.objects.create(slug=f"s{n}", name="s", tools=["lookup"])
    with django_assert_max_num_queries(len(few.captured_queries)):  # not one build per server
        api.get("/api/v1/servers/")


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"slug": "Not A Slug"}, "slug", "one URL path segment"),
    ({"slug": "well-known"}, "slug", "is a path the site uses"),
    ({"auth_modes": ["keys", "magic"]}, "auth_modes", "Unknown auth modes ['magic']"),
    ({"rate_limit": "fast"}, "rate_limit", "60/60"),
    ({"tools": ["lookup", "ghost"]}, "tools", "No tool named 'ghost' in the registry or in code."),
    ({"resources": ["file:///nowhere"]}, "resources", "No resource with the URI 'file:///nowhere'"),
    ({"resource_templates": ["file:///x/{y}"]}, "resource_templates", "Templates are named by"),
    ({"prompts": ["nope"]}, "prompts", "No prompt named 'nope'"),
    ({"skills": ["tidy"]}, "skills", "skill://<path>"),
    ({"tools": "lookup"}, "tools", "Expected a JSON array"),
    ({"include_tags": ["no spaces allowed"]}, "include_tags", ""),
    ({"website_url": "not a url"}, "website_url", "URL"),
    ({"flavour": "mint"}, "flavour", "Unknown field 'flavour'"),
])
def test_bad_bodies_are_400s_naming_the_field(
    api: APIClient, registry: None, change: dict[str, Any], field: str, words: str
) -> None:
    answer = api.post("/api/v1/servers/", {**SERVER, **change}, format="json")
    assert answer.status_code == 400, answer.json()
    assert list(answer.json()) == [field], answer.json()
    assert words in " ".join(answer.json()[field])
    assert not VirtualServer.objects.exists()


def test_a_slug_taken_is_a_400_on_slug(api: APIClient, registry: None) -> None:
    VirtualServer.objects.create(slug="support", name="first")
    answer = api.post("/api/v1/servers/", SERVER, format="json")
    assert answer.status_code == 400 and "slug" in answer.json()


@pytest.fixture
def code_tool() -> Iterator[None]:
    def in_code() -> str:
        """A tool written in code."""
        return "hi"

    code.tool(in_code)
    yield
    code.forget(in_code)


def test_names_in_code_and_skill_roots_are_known(api: APIClient, registry: None, code_tool: None) -> None:
    replace_skill("tidy", "---\nname: tidy\ndescription: Tidy up.\n---\nTidy.\n", [])
    answer = api.post("/api/v1/servers/", {**SERVER, "tools": ["in_code"], "skills": ["skill://tidy"]},
                      format="json")
    assert answer.status_code == 201, answer.json()
    assert answer.json()["members"]["skills"] == ["skill://tidy"]
    assert "in_code" in answer.json()["members"]["tools"]


def test_a_name_the_server_already_holds_is_not_refused_once_its_definition_is_gone(
    api: APIClient, registry: None
) -> None:
    api.post("/api/v1/servers/", SERVER, format="json")
    Tool.objects.filter(name="lookup").delete()
    kept = api.patch("/api/v1/servers/support/", {"title": "Still here", "tools": ["lookup"]}, format="json")
    assert kept.status_code == 200, kept.json()
    assert "lookup" not in kept.json()["members"]["tools"]  # named, not served
    again = api.patch("/api/v1/servers/support/", {"tools": ["lookup", "ghost"]}, format="json")
    assert again.status_code == 400 and "'ghost'" in again.json()["tools"][0]


def test_model_permissions_guard_reads_and_writes(registry: None) -> None:
    VirtualServer.objects.create(slug="a", name="a")
    nobody = client_for(staff_with())
    assert nobody.get("/api/v1/servers/").status_code == 403
    assert nobody.get("/api/v1/servers/a/").status_code == 403
    reader = client_for(staff_with("view_virtualserver"))
    assert reader.get("/api/v1/servers/a/").status_code == 200
    assert reader.patch("/api/v1/servers/a/", {"title": "x"}, format="json").status_code == 403
    assert reader.post("/api/v1/servers/", SERVER, format="json").status_code == 403
    assert reader.delete("/api/v1/servers/a/").status_code == 403
    writer = client_for(staff_with("view_virtualserver", "add_virtualserver"))
    assert writer.post("/api/v1/servers/", SERVER, format="json").status_code == 201
    assert APIClient().get("/api/v1/servers/").status_code == 401
    assert VirtualServer.objects.get(slug="a").title == ""


@pytest.mark.django_db(transaction=True)  # each request commits its own change set, as served
def test_api_edits_are_recorded_in_the_history_with_their_author(registry: None, token: str) -> None:
    client = APIClient(HTTP_AUTHORIZATION=f"Bearer {token}")
    created = client.post("/api/v1/servers/", SERVER, format="json").json()
    client.patch("/api/v1/servers/support/", {"title": "Help"}, format="json")
    records = list(VirtualServer.history.filter(id=created["id"]).order_by("history_id"))
    assert [(r.history_type, r.title) for r in records] == [("+", "Support desk"), ("~", "Help")]
    changesets = ChangeSet.objects.filter(pk__in=[r.changeset_id for r in records])
    assert [(c.source, c.actor) for c in changesets] == [("api", "token:tests")] * 2


# -- tool search (issue 41) -------------------------------------------------------------------------
def test_tool_search_fields_are_edited_and_reach_the_snapshot_spec(api: APIClient, registry: None) -> None:
    from registry.server_selection import current_snapshot

    created = api.post("/api/v1/servers/", {**SERVER, "tool_search": "auto", "tool_search_threshold": 3,
                                            "search_tool_name": "find_tools"}, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert (body["tool_search"], body["tool_search_threshold"]) == ("auto", 3)
    assert (body["search_tool_name"], body["call_tool_name"]) == ("find_tools", "call_tool")
    spec = current_snapshot().endpoint("support")
    assert spec is not None
    assert (spec.tool_search.mode, spec.tool_search.threshold, spec.tool_search.search_tool) == (
        "auto", 3, "find_tools")
    bad = api.patch("/api/v1/servers/support/", {"tool_search": "sometimes", "call_tool_name": "find_tools"},
                    format="json")
    assert bad.status_code == 400 and "tool_search" in bad.json()
    same = api.patch("/api/v1/servers/support/", {"call_tool_name": "find_tools"}, format="json")
    assert same.status_code == 400 and "call_tool_name" in same.json()


def test_a_tools_always_load_is_edited_by_the_api_and_served_in_its_meta(
    api: APIClient, registry: None
) -> None:
    from registry.server_selection import current_snapshot

    pk = Tool.objects.get(name="lookup").pk
    changed = api.patch(f"/api/v1/tools/{pk}/", {"always_load": True, "meta": {"vendor/x": 1}}, format="json")
    assert changed.status_code == 200, changed.json()
    assert changed.json()["always_load"] is True
    served = current_snapshot().tool("lookup")
    assert served is not None and served.meta == {"vendor/x": 1, "anthropic/alwaysLoad": True}
    other = current_snapshot().tool("deploy")
    assert other is not None and other.meta is None
