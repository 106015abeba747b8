"""Issue 31 item 1 through ``/api/v1/tools/``: the API applies the tool's kind rules of the model
(``Tool.clean``) as the admin does: a switch of kind clears the other kinds' fields, a template
placeholder the input schema cannot fill is a field error, an enabled http tool's host must be on
``REGISTRY_HTTP_ALLOWED_HOSTS``."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from registry.models import Tool

from .conftest import TEMPLATE_TOOL

pytestmark = pytest.mark.django_db

HTTP_TOOL: dict[str, Any] = {
    **{k: v for k, v in TEMPLATE_TOOL.items() if k != "template_text"},
    "name": "api_http_tool",
    "kind": "http",
    "http_url": "https://api.example.com/greet/{who}",
    "http_method": "GET",
    "http_headers": {"Accept-Language": "en"},
}


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["api.example.com"])
def test_a_patch_that_switches_the_kind_clears_the_other_kinds_fields(api: APIClient) -> None:
    created = api.post("/api/v1/tools/", HTTP_TOOL, format="json")
    assert created.status_code == 201, created.json()
    url = f"/api/v1/tools/{created.json()['id']}/"
    patched = api.patch(url, {"kind": "template", "template_text": "Hi {{ who }}"}, format="json")
    assert patched.status_code == 200, patched.json()
    body = patched.json()
    assert (body["http_url"], body["http_method"], body["http_headers"]) == ("", "POST", {})
    row = Tool.objects.get(name="api_http_tool")
    assert (row.kind, row.http_url, row.template_text) == ("template", "", "Hi {{ who }}")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Hi {{ whom }}", "does not define 'whom'"),
        ("Hi {{ who.upper }}", "no attribute access"),
        ("{% if who %}hi{% endif %}", "is not supported"),
    ],
)
def test_a_template_the_schema_cannot_fill_is_a_400_on_its_field(
    api: APIClient, text: str, words: str
) -> None:
    answer = api.post("/api/v1/tools/", {**TEMPLATE_TOOL, "template_text": text}, format="json")
    assert answer.status_code == 400
    assert words in " ".join(answer.json()["template_text"])
    assert not Tool.objects.exists()


def test_an_enabled_http_tool_on_a_host_not_allowed_is_a_400_and_a_disabled_one_is_saved(
    api: APIClient,
) -> None:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=[]):
        answer = api.post("/api/v1/tools/", HTTP_TOOL, format="json")
        assert answer.status_code == 400
        assert "REGISTRY_HTTP_ALLOWED_HOSTS" in " ".join(answer.json()["http_url"])
        assert api.post("/api/v1/tools/", {**HTTP_TOOL, "enabled": False}, format="json").status_code == 201
