"""Optimistic concurrency on the API: ETag = version; a stale ``If-Match`` gets 412 and changes
nothing; a write without ``If-Match`` is accepted (RFC 9110 §13.1.1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db.models.signals import pre_save
from rest_framework.test import APIClient

from registry.models import Tool

from .conftest import TEMPLATE_TOOL

pytestmark = pytest.mark.django_db


@pytest.fixture
def url(api: APIClient) -> str:
    return f"/api/v1/tools/{api.post('/api/v1/tools/', TEMPLATE_TOOL, format='json').json()['id']}/"


def test_two_writers_from_one_version_the_second_gets_412_and_changes_nothing(
        api: APIClient, url: str) -> None:
    etag = api.get(url)["ETag"]
    first = api.patch(url, {"title": "first"}, format="json", HTTP_IF_MATCH=etag)
    assert first.status_code == 200 and first["ETag"] == '"2"'
    second = api.patch(url, {"title": "second"}, format="json", HTTP_IF_MATCH=etag)
    assert second.status_code == 412
    assert second.json()["detail"].startswith("If-Match")
    put = api.put(url, {**TEMPLATE_TOOL, "title": "second"}, format="json", HTTP_IF_MATCH=etag)
    assert put.status_code == 412
    assert api.delete(url, HTTP_IF_MATCH=etag).status_code == 412
    tool = Tool.objects.get()
    assert (tool.title, tool.version) == ("first", 2)


def test_the_precondition_is_checked_before_the_body(api: APIClient, url: str) -> None:
    api.patch(url, {"title": "moved on"}, format="json")
    assert api.patch(url, {"name": "not a name!"}, format="json", HTTP_IF_MATCH='"1"').status_code == 412


def test_if_match_forms(api: APIClient, url: str) -> None:
    # A list naming the current version, and "*", match; a weak tag never does (strong comparison).
    assert api.patch(url, {"title": "a"}, format="json", HTTP_IF_MATCH='"9", "1"').status_code == 200
    assert api.patch(url, {"title": "b"}, format="json", HTTP_IF_MATCH="*").status_code == 200
    assert api.patch(url, {"title": "c"}, format="json", HTTP_IF_MATCH='W/"3"').status_code == 412
    assert api.delete(url, HTTP_IF_MATCH='"3"').status_code == 204


def test_writes_without_if_match_are_accepted_and_each_bumps_the_version(api: APIClient, url: str) -> None:
    for n in range(3):
        assert api.patch(url, {"title": f"t{n}"}, format="json").status_code == 200
    assert api.get(url)["ETag"] == '"4"'
    # A bulk queryset update is a change too: the ETag moves with it.
    Tool.objects.update(enabled=False)
    assert api.get(url)["ETag"] == '"5"'


@pytest.fixture
def racer() -> Iterator[list[str]]:
    """Another write between the request's read and its save (once). It runs in the request's
    transaction, so the refused request's rollback takes it along: only the answer and the
    absence of the request's own edit can be checked here."""
    raced: list[str] = []

    def race(sender: type[Tool], instance: Tool, **kwargs: object) -> None:
        if not raced and instance.pk is not None:
            raced.append(instance.name)
            Tool.objects.filter(pk=instance.pk).update(title="the racer's")

    pre_save.connect(race, sender=Tool, dispatch_uid="test-racer")
    yield raced
    pre_save.disconnect(sender=Tool, dispatch_uid="test-racer")


def test_a_writer_racing_past_the_check_gets_412_with_if_match(api: APIClient, url: str,
                                                                racer: list[str]) -> None:
    answer = api.patch(url, {"title": "mine"}, format="json", HTTP_IF_MATCH='"1"')
    assert racer and answer.status_code == 412
    assert Tool.objects.get().title != "mine"


def test_a_writer_racing_without_if_match_gets_409_not_a_lost_update(api: APIClient, url: str,
                                                                      racer: list[str]) -> None:
    answer = api.patch(url, {"title": "mine"}, format="json")
    assert racer and answer.status_code == 409
    assert Tool.objects.get().title != "mine"


def test_a_create_racing_another_with_the_same_name_gets_409_not_a_500(api: APIClient) -> None:
    raced: list[str] = []

    def race(sender: type[Tool], instance: Tool, **kwargs: object) -> None:
        if not raced and instance.pk is None:
            raced.append(instance.name)  # commits the same name between the check and the INSERT
            Tool.objects.bulk_create([Tool(name=instance.name, kind="template", template_text="x")])

    pre_save.connect(race, sender=Tool, dispatch_uid="test-create-racer")
    try:
        answer = api.post("/api/v1/tools/", TEMPLATE_TOOL, format="json")
    finally:
        pre_save.disconnect(sender=Tool, dispatch_uid="test-create-racer")
    assert raced and answer.status_code == 409
    assert "same name or URI" in answer.json()["detail"]
