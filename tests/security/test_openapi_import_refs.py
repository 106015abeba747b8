"""OpenAPI import from outside (issue 37 item 1): a ``$ref`` that leaves the document is refused
with a 400 naming where it sits, before any validation, by the REST endpoint and the admin upload,
dry run too; nothing is read from the server's files and no request leaves the server (a real
loopback listener records none). A reference that a resolver cannot follow is a 400, never a 500;
references inlined from inside the document have a bound on what they expand to."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from registry.models import Tool
from tests.support.upstream import Upstream

pytestmark = pytest.mark.django_db
URL = "/api/v1/registry/openapi"


def document(schemas: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {"/a": {"get": {"operationId": "getA", "responses": {"200": {
            "description": "ok",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}}}},
        "components": {"schemas": schemas},
    }


@pytest.fixture(scope="module")
def listener() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture
def api(superuser: User) -> APIClient:
    client = APIClient()
    client.force_login(superuser)
    return client


@pytest.fixture
def admin(superuser: User) -> Client:
    client = Client()
    client.force_login(superuser)
    return client


def remote_refs(listener: Upstream) -> list[str]:
    return ["file:///etc/passwd", "file:///proc/self/environ", f"{listener.url}/echo/schema.json",
            f"{listener.url}/echo/schema.json#/A"]


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_remote_ref_is_a_400_naming_its_pointer_and_nothing_is_read_or_fetched(
    api: APIClient, listener: Upstream, dry_run: bool
) -> None:
    listener.clear()
    for ref in remote_refs(listener):
        body = {"document": document({"A": {"type": "object", "properties": {"x": {"$ref": ref}}}}),
                "source": "evil", "dry_run": dry_run}
        answer = api.post(URL, body, format="json")
        assert answer.status_code == 400, (ref, answer.content)
        message = answer.json()["errors"][0]["message"]
        assert "/components/schemas/A/properties/x/$ref" in message and ref in message
        assert "root:" not in answer.content.decode() and "PATH=" not in answer.content.decode()
    assert listener.requests == [] and not Tool.objects.exists()


def test_a_remote_ref_in_yaml_text_is_refused_too(api: APIClient, listener: Upstream) -> None:
    listener.clear()
    text = (
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    $ref: "
        f"'{listener.url}/echo/path-item.yaml'\n"
    )
    answer = api.post(URL, {"document": text, "source": "evil", "dry_run": True}, format="json")
    assert answer.status_code == 400 and "/paths/~1a/$ref" in answer.json()["errors"][0]["message"]
    assert listener.requests == []


def test_a_ref_made_remote_by_an_id_is_a_400_and_fetches_nothing(api: APIClient, listener: Upstream) -> None:
    listener.clear()
    schemas = {"A": {"$id": f"{listener.url}/echo/base/", "type": "object",
                     "properties": {"x": {"$ref": "#/$defs/missing"}}}}
    answer = api.post(URL, {"document": document(schemas), "source": "evil", "dry_run": True}, format="json")
    assert answer.status_code in (200, 400), answer.content  # a plan or a clear refusal, never a 500
    assert listener.requests == []


@pytest.mark.parametrize("dry_run", [True, False])
def test_the_admin_upload_refuses_a_remote_ref_as_a_form_error(
    admin: Client, listener: Upstream, dry_run: bool
) -> None:
    import json

    listener.clear()
    url = reverse("admin:registry_tool_import_openapi")
    for ref in remote_refs(listener):
        raw = json.dumps(document({"A": {"$ref": ref}})).encode()
        upload = SimpleUploadedFile("o.json", raw, content_type="application/json")
        form = {"document": upload, "source": "evil",
                **({"dry_run": "on"} if dry_run else {})}
        answer = admin.post(url, form)
        assert answer.status_code == 200
        errors = answer.context["form"].errors["document"]
        assert any("/components/schemas/A/$ref" in e for e in errors), errors
        assert "root:" not in answer.content.decode()
    assert listener.requests == [] and not Tool.objects.exists()


def test_local_refs_that_expand_past_the_bound_are_a_400(api: APIClient) -> None:
    # "Billion laughs" without YAML: each schema names the previous one nine times.
    schemas: dict[str, Any] = {"L0": {"type": "string"}}
    for level in range(1, 10):
        previous = {"$ref": f"#/components/schemas/L{level - 1}"}
        schemas[f"L{level}"] = {"type": "array", "prefixItems": [previous] * 9}
    schemas["A"] = {"type": "object", "properties": {"x": {"$ref": "#/components/schemas/L9"}}}
    answer = api.post(URL, {"document": document(schemas), "source": "bomb", "dry_run": True}, format="json")
    assert answer.status_code == 400 and "expand past" in answer.json()["errors"][0]["message"]
