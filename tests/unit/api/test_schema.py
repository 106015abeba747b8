"""The served OpenAPI document: valid OpenAPI 3.1, naming every route of the API's URL conf with
its parameters and error responses; the docs page serves its assets locally."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.urls import URLPattern, URLResolver
from rest_framework.test import APIClient

from management_api import urls as api_urls

pytestmark = pytest.mark.django_db
NOT_IN_SCHEMA = {"/api/v1/schema/", "/api/v1/docs/", "/api/v1/"}  # the document, its page, the root


def routes(patterns: list[Any], prefix: str = "/api/v1/") -> set[str]:
    found: set[str] = set()
    for entry in patterns:
        raw = str(entry.pattern.regex.pattern if hasattr(entry.pattern, "regex") else entry.pattern)
        text = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", raw).replace("\\Z", "").strip("^$").replace("\\", "")
        text = text.replace("{pk}", "{id}")  # drf-spectacular names a model's pk by its field
        if isinstance(entry, URLResolver):
            found |= routes(entry.url_patterns, prefix + text)
        elif isinstance(entry, URLPattern):
            found.add(prefix + text)
    return found


@pytest.fixture
def document(api: APIClient) -> dict[str, Any]:
    answer = api.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert answer.status_code == 200
    return dict(answer.json())


def test_the_schema_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    assert document["openapi"] == "3.1.0"
    # Not installed by the Django 6 run (scripts/test-django6.sh), which then skips this check.
    validator = pytest.importorskip("openapi_spec_validator")
    validator.validate(document, cls=validator.OpenAPIV31SpecValidator)  # raises on any violation


def test_the_schema_names_every_route_of_the_url_conf(document: dict[str, Any]) -> None:
    expected = routes(api_urls.urlpatterns) - NOT_IN_SCHEMA
    assert expected, "no routes found"
    assert set(document["paths"]) == expected


def test_writes_document_if_match_and_their_error_responses(document: dict[str, Any]) -> None:
    for path, item in document["paths"].items():
        for method in ("put", "patch", "delete"):
            # Definitions are versioned (If-Match); live sessions, /mcp API keys, OAuth grants and
            # connection providers are not.
            unversioned = ("sessions", "keys", "oauth-grants", "providers")
            one = "{id}" in path or "{slug}" in path  # virtual servers are addressed by slug
            if method in item and one and not any(part in path for part in unversioned):
                operation = item[method]
                assert "If-Match" in [p["name"] for p in operation.get("parameters", [])], (path, method)
                assert {"403", "404", "412"} <= set(operation["responses"]), (path, method)
    schemes = document["components"]["securitySchemes"]
    assert schemes["managementToken"] == {**schemes["managementToken"], "type": "http", "scheme": "bearer"}


def test_the_docs_page_serves_its_assets_from_this_server(api: APIClient) -> None:
    page = api.get("/api/v1/docs/").content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert any("swagger-ui" in a for a in assets)
    assert all(a.startswith("/") for a in assets), assets  # nothing from a CDN
    assert "/api/v1/schema/" in page
    for asset in assets:  # static files of an installed app (WhiteNoise serves them; no internet)
        assert asset.startswith(settings.STATIC_URL if settings.STATIC_URL.startswith("/")
                                else "/" + settings.STATIC_URL), asset
        assert finders.find(asset.split("/", 2)[2]) is not None, asset


def test_the_schema_and_docs_are_for_staff_only(db: None) -> None:
    assert APIClient().get("/api/v1/schema/").status_code in (401, 403)


# Issue 31 item 6: the document as a client generator or a newcomer reads it.
OPERATIONS = ("get", "put", "patch", "post", "delete")
ANY_JSON = {"template_structured", "http_body_template", "document"}  # any JSON value, by design


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, item[method]) for path, item in document["paths"].items()
            for method in OPERATIONS if method in item]


def test_every_operation_has_a_description_of_its_own(document: dict[str, Any]) -> None:
    described = {(path, method): op.get("description", "") for path, method, op in operations(document)}
    assert described
    for where, description in described.items():
        assert len(description) >= 60, where  # a sentence or more, beyond the summary
        # Not a docstring inherited from a mixin or DRF's viewsets.
        assert "ModelViewSet" not in description and "For API views" not in description, where
    assert len(set(described.values())) == len(described)  # each says what its own operation does


def test_json_fields_are_typed_as_objects_or_arrays(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    assert schemas["ToolRequest"]["properties"]["input_schema"]["type"] == "object"
    assert schemas["ToolRequest"]["properties"]["output_schema"]["type"] == ["object", "null"]
    assert schemas["ToolRequest"]["properties"]["tags"]["type"] == "array"
    assert schemas["PromptMessageRequest"]["properties"]["content"]["type"] == "object"
    assert schemas["ResourceTemplateRequest"]["properties"]["completions"]["type"] == "object"
    assert schemas["SkillRequest"]["properties"]["frontmatter"]["type"] == "object"
    assert schemas["ApiKeyRequest"]["properties"]["tools"]["type"] == "array"
    untyped = {
        (name, field)
        for name, schema in schemas.items() if name.endswith("Request")
        for field, prop in schema.get("properties", {}).items()
        if not {"type", "$ref", "allOf"} & set(prop)
        and not any({"type", "$ref"} & set(choice) and choice.get("type") != "null"
                    for choice in prop.get("oneOf", []))
    }
    assert {field for _, field in untyped} <= ANY_JSON, untyped


def test_request_bodies_are_json_only(document: dict[str, Any]) -> None:
    bodies = {(path, method): list(op["requestBody"]["content"])
              for path, method, op in operations(document) if "requestBody" in op}
    assert bodies
    assert all(types == ["application/json"] for types in bodies.values()), bodies


def test_listings_document_their_count(document: dict[str, Any]) -> None:
    page = document["components"]["schemas"]["PaginatedToolList"]
    assert page["properties"]["count"]["type"] == "integer" and "count" in page["required"]


def test_the_docs_page_sends_a_visitor_who_is_not_staff_to_the_login(db: None) -> None:
    anonymous = APIClient().get("/api/v1/docs/")
    assert anonymous.status_code == 302
    assert anonymous["Location"] == "/admin/login/?next=/api/v1/docs/"
    not_staff = APIClient()
    not_staff.force_login(User.objects.create_user("visitor", password="pw"))
    assert not_staff.get("/api/v1/docs/")["Location"].startswith("/admin/login/")
    assert APIClient().get("/api/v1/schema/").status_code == 401  # the document itself: still the API's
