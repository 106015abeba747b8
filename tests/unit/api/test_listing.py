"""Listings: ``?name=``, ``?enabled=``, ``?kind=``, ``?search=``, ``?ordering=``, cursor pagination,
and a constant number of queries whatever the page size (no N+1)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from registry.models import Prompt, PromptArgument, PromptMessage, Resource, ResourceTemplate, Tool

pytestmark = pytest.mark.django_db


def make_tools(count: int) -> None:
    Tool.objects.bulk_create(
        Tool(name=f"tool{n:03d}", description="even" if n % 2 == 0 else "odd", kind="template",
             template_text="x", enabled=n % 3 != 0, title=f"Title {n}")
        for n in range(count)
    )


def make_prompts(count: int) -> None:
    prompts = Prompt.objects.bulk_create(Prompt(name=f"p{n:03d}") for n in range(count))
    PromptArgument.objects.bulk_create(PromptArgument(prompt=p, name=f"a{i}", position=i)
                                       for p in prompts for i in range(3))
    PromptMessage.objects.bulk_create(
        PromptMessage(prompt=p, position=i, content={"type": "text", "text": "hi"}) for p in prompts
        for i in range(2))


def names(answer: Any) -> list[str]:
    assert answer.status_code == 200, answer.content
    return [row["name"] for row in answer.json()["results"]]


def test_filters_by_name_enabled_kind_and_search(api: APIClient) -> None:
    make_tools(9)
    Tool.objects.filter(name="tool004").update(kind="handler", handler="demo.echo")
    assert names(api.get("/api/v1/tools/?name=tool004")) == ["tool004"]
    assert names(api.get("/api/v1/tools/?enabled=false")) == ["tool000", "tool003", "tool006"]
    assert len(names(api.get("/api/v1/tools/?enabled=true"))) == 6
    assert names(api.get("/api/v1/tools/?kind=handler")) == ["tool004"]
    assert names(api.get("/api/v1/tools/?search=Title 7")) == ["tool007"]
    assert len(names(api.get("/api/v1/tools/?search=odd"))) == 4  # in the description
    assert names(api.get("/api/v1/tools/?kind=handler&enabled=false")) == []
    assert api.get("/api/v1/tools/?kind=nonsense").status_code == 400


def test_ordering_and_cursor_pagination_walk_every_row_once(api: APIClient) -> None:
    make_tools(25)
    assert names(api.get("/api/v1/tools/?ordering=-name&page_size=3")) == ["tool024", "tool023", "tool022"]
    seen: list[str] = []
    url: str | None = "/api/v1/tools/?page_size=10"
    while url:
        page = api.get(url).json()
        seen += [row["name"] for row in page["results"]]
        url = page["next"]
    assert seen == [f"tool{n:03d}" for n in range(25)]
    # The cursor is opaque and checked: a forged one is a 404 ("Invalid cursor"), not a 500.
    assert api.get("/api/v1/tools/?cursor=forged").status_code == 404


@pytest.mark.parametrize("endpoint", ["tools", "prompts", "resources", "resource-templates"])
def test_a_page_costs_the_same_queries_for_2_rows_as_for_200(api: APIClient, endpoint: str) -> None:
    def queries(size: int) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert api.get(f"/api/v1/{endpoint}/?page_size={size}").status_code == 200
        return len(captured)

    make_tools(200)
    make_prompts(200)
    Resource.objects.bulk_create(Resource(uri=f"file:///r{n}", name=f"r{n}", text="x") for n in range(200))
    ResourceTemplate.objects.bulk_create(
        ResourceTemplate(uri_template=f"file:///t{n}/{{x}}", name=f"t{n}", text_template="x")
        for n in range(200))
    small = queries(2)
    assert queries(200) == small


def test_a_page_of_100_prompts_with_children_needs_few_queries(
        api: APIClient, django_assert_max_num_queries: Any) -> None:
    make_prompts(100)
    # session + user, the page, its arguments, its messages, and the page's count.
    with django_assert_max_num_queries(6):
        answer = api.get("/api/v1/prompts/?page_size=100")
    assert len(answer.json()["results"]) == 100
    assert [len(p["arguments"]) for p in answer.json()["results"]] == [3] * 100
