"""OpenAPI 3.0/3.1 import (issue 29 item 5): the Swagger Petstore document (vendored, Apache 2.0,
tests/fixtures/openapi/petstore) and mcpsite's own /api/v1/schema/ as http tools; the rules, the dry
run, re-imports that update their own tools and leave the others alone, and imported tools called
against a loopback server implementing a few Petstore operations."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from rest_framework.test import APIClient

from mcp_protocol.methods.tools import execute_tool
from mcp_protocol.versions import LATEST
from registry.models import Tool
from registry.provider import RegistryProvider
from tests.support.upstream import Upstream

from .conftest import make_context

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("allow_loopback")]
PETSTORE = Path(__file__).resolve().parents[2] / "fixtures" / "openapi" / "petstore" / "openapi.yaml"


@pytest.fixture
def allow_loopback() -> Iterator[None]:
    """The imported tools call 127.0.0.1: an enabled http tool's host must be allowed when saved."""
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"]):
        yield


@pytest.fixture(scope="module")
def api() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture
def api_client(db: None) -> APIClient:
    from django.contrib.auth.models import User

    client = APIClient()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def import_openapi(*args: str) -> str:
    out = io.StringIO()
    call_command("import_openapi", *args, stdout=out)
    return out.getvalue()


def petstore(*args: str, base_url: str = "http://127.0.0.1:9/api/v3") -> str:
    return import_openapi(str(PETSTORE), "--source", "petstore", "--base-url", base_url, *args)


def test_the_petstore_becomes_one_reviewable_http_tool_per_operation() -> None:
    out = petstore()
    assert "imported: 19 create" in out
    tools = {t.name: t for t in Tool.objects.filter(openapi_source="petstore")}
    assert len(tools) == 19 and all(t.kind == "http" and t.enabled for t in tools.values())
    pet = tools["getPetById"]
    assert (pet.http_method, pet.http_url) == ("GET", "http://127.0.0.1:9/api/v3/pet/{petId}")
    assert pet.input_schema["required"] == ["petId"]
    assert pet.input_schema["properties"]["petId"]["type"] == "integer"
    assert pet.output_schema is not None and "photoUrls" in pet.output_schema["properties"]  # $ref resolved
    assert pet.annotations["readOnlyHint"] is True and pet.annotations["idempotentHint"] is True
    assert tools["deletePet"].annotations["destructiveHint"] is True
    assert tools["addPet"].annotations["readOnlyHint"] is False
    assert tools["findPetsByTags"].http_url.endswith("/pet/findByTags{?tags*}")  # exploded array
    assert tools["findPetsByStatus"].output_schema["properties"]["result"]["type"] == "array"  # wrapped
    assert tools["addPet"].input_schema["required"] == ["name", "photoUrls"]  # the JSON body's own
    assert tools["updateUser"].http_body_template == "{{ body }}"  # its body's "username" clashes


def test_a_dry_run_prints_the_plan_and_writes_nothing() -> None:
    out = petstore("--dry-run")
    assert "create    getPetById  GET /pet/{petId}" in out
    assert "api_key: an API key in header 'api_key' (--secret-header api_key)" in out
    assert "petstore_auth: oauth2 (not sent by http tools" in out
    assert "dry run, nothing written: 19 create" in out
    assert not Tool.objects.exists()


def test_rules_include_and_exclude_by_tag_path_and_method() -> None:
    petstore(
        "--include-tag", "pet", "--exclude-path", "/pet/{petId}/*", "--method", "GET", "--method", "DELETE"
    )
    assert set(Tool.objects.values_list("name", flat=True)) == {
        "findPetsByStatus",
        "findPetsByTags",
        "getPetById",
        "deletePet",
    }


def test_a_reimport_updates_its_own_tools_keeps_tuning_and_leaves_hand_made_ones_alone(
    tmp_path: Path,
) -> None:
    Tool.objects.create(name="addPet", kind="template", template_text="mine", description="hand-made")
    petstore()
    tuned = Tool.objects.get(name="getPetById")
    tuned.enabled, tuned.http_max_concurrency = False, 3
    tuned.save()
    document = PETSTORE.read_text().replace("summary: Find pet by ID", "summary: Find one pet by its ID")
    changed = tmp_path / "openapi.yaml"
    changed.write_text(document.replace("operationId: logoutUser", "operationId: signOut"))
    out = import_openapi(str(changed), "--source", "petstore", "--base-url", "http://127.0.0.1:9/api/v3")
    assert "update    getPetById  GET /pet/{petId}: annotations, title" in out
    assert "conflict  addPet" in out and "made by hand" in out
    assert "stale     logoutUser" in out and "create    signOut" in out
    assert "unchanged getInventory" in out
    row = Tool.objects.get(name="getPetById")
    assert row.title == "Find one pet by its ID." and row.enabled is False and row.http_max_concurrency == 3
    assert Tool.objects.get(name="addPet").template_text == "mine"
    import_openapi(str(changed), "--source", "petstore", "--base-url", "http://127.0.0.1:9/api/v3", "--prune")
    assert not Tool.objects.filter(name="logoutUser").exists()


def test_a_document_that_is_not_openapi_3_is_refused(tmp_path: Path) -> None:
    swagger = tmp_path / "swagger.json"
    swagger.write_text(json.dumps({"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}}))
    with pytest.raises(CommandError, match=r"OpenAPI 3\.0 or 3\.1 only"):
        import_openapi(str(swagger), "--source", "old")
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"openapi": "3.1.0", "info": {"title": "t"}, "paths": {}}))
    with pytest.raises(CommandError, match=r"not a valid OpenAPI 3\.1\.0 document"):
        import_openapi(str(broken), "--source", "broken")
    assert not Tool.objects.exists()


def test_imported_tools_call_a_server_implementing_the_petstore(api: Upstream) -> None:
    petstore(base_url=f"{api.url}/api/v3")
    provider = RegistryProvider()
    provider.snapshot()

    async def work() -> dict[str, dict[str, Any]]:
        await provider.start(None)
        try:
            results = {}
            for name, arguments in (
                ("getPetById", {"petId": 7}),
                ("findPetsByStatus", {"status": "sold"}),
                ("addPet", {"name": "Rex", "photoUrls": ["p.png"]}),
                ("missing", {"petId": 404}),
            ):
                tool = provider.snapshot().tool(name if name != "missing" else "getPetById")
                assert tool is not None
                # As tools/call runs it: an upstream's ToolError becomes its result in the core.
                results[name] = await execute_tool(provider, tool, arguments, make_context(), LATEST)
            return results
        finally:
            await provider.stop()

    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"]):
        results = asyncio.run(work())
    tools = {t.name: t for t in Tool.objects.all()}
    for name in ("getPetById", "findPetsByStatus", "addPet"):
        assert "isError" not in results[name], results[name]
        jsonschema.validate(results[name]["structuredContent"], tools[name].output_schema)  # as the core does
    assert results["getPetById"]["structuredContent"]["id"] == 7
    assert results["findPetsByStatus"]["structuredContent"]["result"][0]["status"] == "sold"
    assert results["addPet"]["structuredContent"] == {"name": "Rex", "photoUrls": ["p.png"], "id": 10}
    assert results["missing"]["isError"] and results["missing"]["content"][0]["text"].endswith(
        "404: Pet not found"
    )


def test_mcpsites_own_schema_imports_as_tools_that_manage_the_registry(api_client: APIClient) -> None:
    served = api_client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert served.status_code == 200
    document = served.json()
    from registry.transfer.openapi.importer import Options, run

    report = run(
        document,
        Options(
            source="mcpsite",
            base_url="http://127.0.0.1:8000",
            prefix="mcpsite.",
            secret_header="Authorization",
            secret_env="MCP_TOOL_SECRET_MCPSITE",
        ),
    )
    assert report.count("invalid") == 0, [c.as_dict() for c in report.changes if c.action == "invalid"]
    names = set(Tool.objects.filter(openapi_source="mcpsite").values_list("name", flat=True))
    assert {"mcpsite.tools_list", "mcpsite.tools_create"} <= names, sorted(names)
    listing = Tool.objects.get(name="mcpsite.tools_list")
    assert listing.http_method == "GET" and listing.http_url.startswith("http://127.0.0.1:8000/api/v1/tools/")
    assert listing.http_secret_header == "Authorization"


def test_the_rest_endpoint_plans_imports_and_refuses_a_bad_document(api_client: APIClient) -> None:
    body = {
        "document": PETSTORE.read_text(),
        "source": "petstore",
        "base_url": "http://127.0.0.1:9/api/v3",
        "include_tags": ["store"],
        "dry_run": True,
    }
    planned = api_client.post("/api/v1/registry/openapi", body, format="json")
    assert planned.status_code == 200, planned.json()
    assert planned.json()["summary"]["create"] == 4 and planned.json()["applied"] is False
    assert not Tool.objects.exists()
    done = api_client.post("/api/v1/registry/openapi", {**body, "dry_run": False}, format="json")
    assert done.status_code == 200 and done.json()["applied"] is True
    assert Tool.objects.filter(openapi_source="petstore").count() == 4
    bad = api_client.post(
        "/api/v1/registry/openapi", {**body, "document": {"openapi": "3.1.0"}}, format="json"
    )
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "/document"
    assert APIClient().post("/api/v1/registry/openapi", body, format="json").status_code in (401, 403)


def test_the_admin_upload_shows_the_plan_then_imports(admin_client: Any) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    url = reverse("admin:registry_tool_import_openapi")
    assert url in admin_client.get(reverse("admin:registry_tool_changelist")).content.decode()
    assert admin_client.get(url).status_code == 200

    def post(dry_run: bool) -> str:
        upload = SimpleUploadedFile("openapi.yaml", PETSTORE.read_bytes(), content_type="application/yaml")
        form = {
            "document": upload,
            "source": "petstore",
            "base_url": "http://127.0.0.1:9/api/v3",
            "include_tags": "user",
            "methods": "GET",
        }
        answer = admin_client.post(url, {**form, **({"dry_run": "on"} if dry_run else {})})
        assert answer.status_code == 200
        return str(answer.content.decode())

    planned = post(dry_run=True)
    assert "Dry run: nothing written" in planned and "getUserByName" in planned
    assert not Tool.objects.exists()
    assert "Imported" in post(dry_run=False)
    assert set(Tool.objects.values_list("name", flat=True)) == {"loginUser", "logoutUser", "getUserByName"}


def test_an_access_tag_is_given_to_every_tool_and_kept_by_a_reimport_without_one() -> None:
    petstore("--include-tag", "store", "--tag", "petstore-ops")
    assert {tuple(t) for t in Tool.objects.values_list("tags", flat=True)} == {("petstore-ops",)}
    assert "unchanged getInventory" in petstore("--include-tag", "store")
    assert Tool.objects.get(name="getInventory").tags == ["petstore-ops"]


@pytest.mark.parametrize("union", ["allOf", "anyOf", "oneOf"])
def test_an_object_composed_with_allof_anyof_or_oneof_is_an_object_output_and_its_calls_pass_it(
    api: Upstream, union: str
) -> None:
    # Issue 37: the outputSchema was wrapped as {"result": ...} while the kind passes an object
    # reply through as is, so every call of such a tool failed its own schema.
    named = {"type": "object", "properties": {"name": {"type": "string"}}}
    with_id = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
    problem = {"type": "object", "properties": {"code": {"type": "integer"}}, "required": ["code"]}
    second = "Named" if union == "allOf" else "Problem"  # the reply is a pet: one branch of a oneOf
    document = {
        "openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "servers": [{"url": f"{api.url}/api/v3"}],
        "components": {"schemas": {"Named": named, "WithId": with_id, "Problem": problem}},
        "paths": {"/pet/{petId}": {"get": {
            "operationId": "getPet",
            "parameters": [{"name": "petId", "in": "path", "required": True, "schema": {"type": "integer"}}],
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {
                union: [{"$ref": "#/components/schemas/WithId"},
                        {"$ref": f"#/components/schemas/{second}"}]}}}}},
        }}},
    }
    from registry.transfer.openapi.importer import Options, run

    run(document, Options(source="composed"))
    tool = Tool.objects.get(name="getPet")
    assert "result" not in (tool.output_schema.get("properties") or {}), tool.output_schema
    provider = RegistryProvider()
    provider.snapshot()

    async def work() -> dict[str, Any]:
        await provider.start(None)
        try:
            spec = provider.snapshot().tool("getPet")
            assert spec is not None
            return await provider.call_tool(spec, {"petId": 7}, make_context())
        finally:
            await provider.stop()

    result = asyncio.run(work())
    assert "isError" not in result, result
    jsonschema.validate(result["structuredContent"], tool.output_schema)  # as the core does
    assert result["structuredContent"]["id"] == 7
