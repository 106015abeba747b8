"""Rows mirrored from an upstream through ``/api/v1/tools/`` etc. (issue 40 items 2 and 5): only the
operator's fields (enabled, name, title, description, annotations, tags) may change, each change
recorded in ``upstream_overrides`` so a sync keeps it; an edit of an upstream-owned field is a 400
naming the field; a row of our own is not affected."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from registry.models import Prompt, PromptArgument, Resource, Tool, Upstream

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


@pytest.fixture
def upstream(db: None) -> Upstream:
    return Upstream.objects.create(name="vendor", prefix="vnd", url="https://mcp.vendor.example/mcp")


@pytest.fixture
def mirrored(upstream: Upstream) -> Tool:
    return Tool.objects.create(
        name="vnd_search",
        kind="upstream",
        upstream=upstream,
        upstream_name="search",
        description="Search",
        input_schema=SCHEMA,
        upstream_definition={"name": "search", "inputSchema": SCHEMA},
    )


def test_override_fields_are_editable_and_recorded(api: APIClient, mirrored: Tool) -> None:
    url = f"/api/v1/tools/{mirrored.pk}/"
    answer = api.patch(
        url,
        {"description": "Search the vendor's catalog", "tags": ["vendor"], "enabled": False},
        format="json",
    )
    assert answer.status_code == 200, answer.json()
    mirrored.refresh_from_db()
    assert mirrored.description == "Search the vendor's catalog" and mirrored.tags == ["vendor"]
    assert mirrored.upstream_overrides == ["description", "enabled", "tags"]
    # Renamed: our name, recorded; what the upstream calls it stays.
    assert api.patch(url, {"name": "catalog_search"}, format="json").status_code == 200
    mirrored.refresh_from_db()
    assert mirrored.upstream_overrides == ["description", "enabled", "name", "tags"]
    assert mirrored.upstream_name == "search"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"input_schema": {"type": "object", "properties": {}}}, "input_schema"),
        ({"kind": "template", "template_text": "hi"}, "kind"),
        ({"output_schema": {"type": "object"}}, "output_schema"),
        ({"description": "fine", "meta": {"x": 1}}, "meta"),
    ],
)
def test_upstream_owned_fields_are_400s_naming_them(
    api: APIClient, mirrored: Tool, change: dict[str, Any], field: str
) -> None:
    answer = api.patch(f"/api/v1/tools/{mirrored.pk}/", change, format="json")
    assert answer.status_code == 400
    message = answer.json()[field][0]
    assert "Mirrored from the upstream 'vendor'" in message and f"{field} is the upstream's" in message
    mirrored.refresh_from_db()
    assert (
        mirrored.input_schema == SCHEMA
        and mirrored.description == "Search"
        and not mirrored.upstream_overrides
    )


def test_a_put_of_the_row_as_read_with_one_override_changed_is_accepted(
    api: APIClient, mirrored: Tool
) -> None:
    body = api.get(f"/api/v1/tools/{mirrored.pk}/").json()
    body["title"] = "Vendor search"
    answer = api.put(f"/api/v1/tools/{mirrored.pk}/", body, format="json")
    assert answer.status_code == 200, answer.json()
    mirrored.refresh_from_db()
    assert mirrored.title == "Vendor search" and mirrored.upstream_overrides == ["title"]


def test_mirrored_resources_and_prompts_follow_the_same_rule(api: APIClient, upstream: Upstream) -> None:
    resource = Resource.objects.create(
        uri="vendor://docs/readme",
        name="vnd_readme",
        kind="upstream",
        upstream=upstream,
        upstream_name="vendor://docs/readme",
    )
    bad = api.patch(f"/api/v1/resources/{resource.pk}/", {"uri": "vendor://other"}, format="json")
    assert bad.status_code == 400 and "uri is the upstream's" in bad.json()["uri"][0]
    assert (
        api.patch(f"/api/v1/resources/{resource.pk}/", {"title": "Readme"}, format="json").status_code == 200
    )

    prompt = Prompt.objects.create(name="vnd_review", upstream=upstream, upstream_name="review")
    PromptArgument.objects.create(prompt=prompt, name="code", required=True, position=0)
    url = f"/api/v1/prompts/{prompt.pk}/"
    bad = api.patch(url, {"arguments": [{"name": "text", "required": True}]}, format="json")
    assert bad.status_code == 400 and "arguments is the upstream's" in bad.json()["arguments"][0]
    same = api.patch(url, {"arguments": [{"name": "code", "required": True}], "tags": ["x"]}, format="json")
    assert same.status_code == 200, same.json()
    prompt.refresh_from_db()
    assert prompt.upstream_overrides == ["tags"]


def test_rows_of_our_own_are_not_affected(api: APIClient) -> None:
    tool = Tool.objects.create(name="ours", kind="template", template_text="hi", input_schema=SCHEMA)
    answer = api.patch(f"/api/v1/tools/{tool.pk}/", {"input_schema": {"type": "object"}}, format="json")
    assert answer.status_code == 200, answer.json()
    tool.refresh_from_db()
    assert tool.upstream_overrides == []
