"""Issue 31 item 6: what a listing's query and a write's ``If-Match`` may say, and what a listing
answers.

- A filter value a filter cannot take (``?enabled=maybe``, ``?kind=bogus``, ``?ordering=colour``)
  is a 400 naming the parameter and the values it takes (it used to filter nothing: every row).
- Every listing page carries ``count``, the rows matching its filters across all pages.
- ``If-Match``: ``"2"`` and lists of tags and ``*`` as RFC 9110 says; ``W/"2"`` never matches (412,
  saying why); an unquoted ``2`` is a 400 that shows the quoted form, before anything is written.
DRF's test client, real database.
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from registry.models import Tool

from .conftest import TEMPLATE_TOOL

pytestmark = pytest.mark.django_db


def make_tools(count: int, **fields: Any) -> None:
    Tool.objects.bulk_create(
        Tool(name=f"tool{n:03d}", kind="template", template_text="hi", **fields) for n in range(count)
    )


@pytest.mark.parametrize(
    "url,parameter,allowed",
    [
        ("/api/v1/tools/?enabled=maybe", "enabled", "true or false"),
        ("/api/v1/prompts/?enabled=yes", "enabled", "true or false"),
        ("/api/v1/tools/?kind=bogus", "kind", "handler, http, template"),
        ("/api/v1/resources/?kind=bogus", "kind", "text, binary, handler"),
        ("/api/v1/keys/?status=lost", "status", "active, expired, revoked"),
        ("/api/v1/tools/?ordering=colour", "ordering", "name, created_at, updated_at"),
        ("/api/v1/skills/?ordering=-size", "ordering", "path, updated_at"),
    ],
)
def test_a_filter_value_it_cannot_take_is_a_400_naming_the_parameter_and_its_values(
    api: APIClient, url: str, parameter: str, allowed: str
) -> None:
    answer = api.get(url)
    assert answer.status_code == 400, answer.content
    [message] = answer.json()[parameter]
    assert message.startswith(f"?{parameter}= takes ") and allowed in message, message


def test_good_filter_values_still_filter(api: APIClient) -> None:
    make_tools(3)
    Tool.objects.filter(name="tool001").update(enabled=False)
    for value, names in (("false", ["tool001"]), ("0", ["tool001"]), ("TRUE", ["tool000", "tool002"])):
        page = api.get(f"/api/v1/tools/?enabled={value}").json()
        assert [row["name"] for row in page["results"]] == names
    assert api.get("/api/v1/tools/?enabled=").json()["count"] == 3  # empty: no filter
    assert api.get("/api/v1/tools/?ordering=-name,created_at").status_code == 200


def test_every_page_of_a_listing_counts_the_rows_its_filters_match(api: APIClient) -> None:
    make_tools(7)
    Tool.objects.filter(name__in=["tool000", "tool001"]).update(enabled=False)
    first = api.get("/api/v1/tools/?enabled=true&page_size=2").json()
    assert first["count"] == 5 and len(first["results"]) == 2
    following = api.get(first["next"]).json()
    assert following["count"] == 5
    assert api.get("/api/v1/tools/?search=tool00").json()["count"] == 7


@pytest.mark.parametrize(
    "url", ["/api/v1/keys/", "/api/v1/audit/", "/api/v1/history/", "/api/v1/skills/", "/api/v1/prompts/"]
)
def test_every_database_listing_has_a_count(api: APIClient, url: str) -> None:
    page = api.get(url).json()
    assert page["count"] == len(page["results"])


@pytest.fixture
def tool_url(api: APIClient) -> str:
    created = api.post("/api/v1/tools/", TEMPLATE_TOOL, format="json")
    assert created.status_code == 201 and created["ETag"] == '"1"'
    return f"/api/v1/tools/{created.json()['id']}/"


@pytest.mark.parametrize("header", ['"1"', '"7", "1"', "*", ' "1" '])
def test_if_match_with_quoted_tags_or_a_star_names_the_current_version(
    api: APIClient, tool_url: str, header: str
) -> None:
    answer = api.patch(tool_url, {"title": "new"}, format="json", HTTP_IF_MATCH=header)
    assert answer.status_code == 200 and answer["ETag"] == '"2"'


@pytest.mark.parametrize("header,shown", [("1", '"1"'), ('"1", 2', '"2"'), ("W/1", '"1"'), ('"1', '"1"')])
def test_an_unquoted_if_match_is_a_400_that_shows_the_quoted_form_and_writes_nothing(
    api: APIClient, tool_url: str, header: str, shown: str
) -> None:
    for method in (api.patch, api.put, api.delete):
        answer = method(tool_url, {**TEMPLATE_TOOL, "title": "new"}, format="json", HTTP_IF_MATCH=header)
        assert answer.status_code == 400, (method, answer.content)
        detail = answer.json()["detail"]
        assert detail.startswith(
            f"If-Match takes the ETag as the server sent it, in double quotes: If-Match: {shown} (not "
        )
    assert api.get(tool_url).json()["version"] == 1


def test_a_weak_if_match_never_matches_and_the_412_says_why(api: APIClient, tool_url: str) -> None:
    answer = api.patch(tool_url, {"title": "new"}, format="json", HTTP_IF_MATCH='W/"1"')
    assert answer.status_code == 412
    assert (
        "compares strongly" in answer.json()["detail"]
        and "weak W/ tag never matches" in answer.json()["detail"]
    )
    stale = api.patch(tool_url, {"title": "new"}, format="json", HTTP_IF_MATCH='"9"')
    assert stale.status_code == 412 and "weak" not in stale.json()["detail"]


def test_a_history_revert_reads_if_match_the_same_way(api: APIClient, tool_url: str) -> None:
    api.patch(tool_url, {"title": "edited"}, format="json")
    tool_id = tool_url.rstrip("/").rsplit("/", 1)[1]
    first = api.get(f"/api/v1/history/tools/{tool_id}/").json()["results"][-1]["version"]
    url = f"/api/v1/history/tools/{tool_id}/{first}/revert"
    unquoted = api.post(url, HTTP_IF_MATCH="2")
    assert unquoted.status_code == 400 and 'If-Match: "2"' in unquoted.json()["detail"]
    assert api.post(url, HTTP_IF_MATCH='"2"').status_code == 200
