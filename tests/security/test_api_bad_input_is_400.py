"""Issue 24, item 9: input that made the REST management API answer 500. Each is now a 400 that
says what is wrong (a field error where there is a field), through DRF's test client, as the REST
API's own code path (no live-server behaviour is involved)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(superuser: User) -> APIClient:
    client = APIClient()
    client.force_login(superuser)
    return client


def _tool(input_schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": "deep", "kind": "template", "template_text": "hi", "input_schema": input_schema}


def _arrays(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


def test_a_page_size_that_isdigit_but_is_no_number_is_a_400_field_error(api: APIClient) -> None:
    answer = api.get("/api/v1/sessions/", {"page_size": "²"})
    assert answer.status_code == 400 and "page_size" in answer.json()


@pytest.mark.parametrize("depth", [120, 400])
def test_an_input_schema_nested_too_deep_for_jsonschema_is_a_400_field_error(
    api: APIClient, depth: int
) -> None:
    schema = {"type": "object", "properties": {"a": _arrays(depth)}}
    answer = api.post("/api/v1/tools/", _tool(schema), format="json")
    assert answer.status_code == 400 and list(answer.json()) == ["input_schema"]


def test_a_deep_schema_in_the_admins_form_is_a_field_error_too(client: Any, superuser: User) -> None:
    client.force_login(superuser)
    schema = {"type": "object", "properties": {"a": _arrays(120)}}
    answer = client.post("/admin/registry/tool/add/", {
        "name": "deep", "kind": "template", "template_text": "hi", "enabled": "on",
        "input_schema": json.dumps(schema), "opened_version": "", "annotations": "{}", "icons": "[]",
        "meta": "{}", "tags": "[]", "execution": "{}", "template_structured": "null"})
    assert answer.status_code == 200  # the form again, with its errors
    assert "input_schema" in answer.context["adminform"].form.errors


@pytest.mark.parametrize("url", ["/api/v1/tools/", "/api/v1/registry/import"])
def test_a_json_body_nested_50000_deep_is_a_400(api: APIClient, url: str) -> None:
    body = '{"tools": ' + "[" * 50_000 + "]" * 50_000 + "}"
    answer = api.post(url, body, content_type="application/json")
    assert answer.status_code == 400
    bare = api.post(url, "[" * 50_000 + "]" * 50_000, content_type="application/json")
    assert bare.status_code == 400 and "detail" in bare.json()


@pytest.mark.parametrize("url,form", [
    ("/api/v1/tools/", {"name": "deep", "kind": "template", "template_text": "hi"}),
    ("/api/v1/keys/", {"name": "deep"}),
])
def test_json_in_a_form_field_nested_50000_deep_is_a_400_field_error(
    api: APIClient, url: str, form: dict[str, str]
) -> None:
    field = "input_schema" if "tools" in url else "tools"
    answer = api.post(url, {**form, field: "[" * 50_000 + "]" * 50_000})  # form-encoded, as the browsable API
    assert answer.status_code == 400 and field in answer.json()
