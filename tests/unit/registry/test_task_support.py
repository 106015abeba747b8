"""Task support per tool (issue 26): a field of the tool row, with a default per kind, served as
``execution.taskSupport`` (2025-11-25 tools.mdx "Tool-Level Negotiation"; read by the tasks
extension's clients in 2026-07-28), written by the REST API and carried by export/import; code
tools declare it in ``@tool``."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from mcp_protocol import versions
from registry.code import definitions as code
from registry.models import Tool
from registry.provider import RegistryProvider
from registry.transfer import documents as transfer

pytestmark = pytest.mark.django_db


def row(**fields: Any) -> Tool:
    base: dict[str, Any] = {
        "description": "d",
        "input_schema": {"type": "object", "properties": {}},
        "template_text": "hi",
    }
    tool = Tool(**{**base, **fields})
    tool.full_clean()
    tool.save()
    return tool


def served(name: str, version: str) -> dict[str, Any]:
    tool = RegistryProvider().snapshot().tool(name)
    assert tool is not None
    return versions.tool_to_wire(tool, version)


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["api.example.com"])
def test_each_kind_has_its_default_and_the_field_overrides_it() -> None:
    row(name="plain")
    row(name="remote", kind="http", http_url="https://api.example.com/x")
    row(name="long", task_support="required")
    assert served("plain", "2025-11-25")["execution"] == {"taskSupport": "forbidden"}
    assert served("remote", "2025-11-25")["execution"] == {"taskSupport": "optional"}
    assert served("long", "2026-07-28")["execution"] == {"taskSupport": "required"}
    assert "execution" not in served("long", "2025-06-18")  # no tasks before 2025-11-25


def test_the_field_wins_over_a_hand_written_execution_object() -> None:
    row(name="mixed", execution={"taskSupport": "required", "x-note": 1}, task_support="optional")
    assert served("mixed", "2025-11-25")["execution"] == {"taskSupport": "optional", "x-note": 1}


def test_an_unknown_value_is_refused_by_validation() -> None:
    with pytest.raises(Exception, match="task_support"):
        row(name="bad", task_support="sometimes")


def test_the_rest_api_writes_and_reads_it(admin_user: Any) -> None:
    client = APIClient()
    client.force_authenticate(admin_user)
    body = {
        "name": "viaapi",
        "kind": "template",
        "template_text": "hi",
        "task_support": "required",
        "input_schema": {"type": "object", "properties": {}},
    }
    created = client.post("/api/v1/tools/", body, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["task_support"] == "required"
    refused = client.post("/api/v1/tools/", {**body, "name": "viaapi2", "task_support": "x"}, format="json")
    assert refused.status_code == 400 and "task_support" in refused.json()


def test_export_and_import_carry_it() -> None:
    row(name="carried", task_support="optional")
    document = transfer.export_document()
    item = next(t for t in document["tools"] if t["name"] == "carried")
    assert item["task_support"] == "optional"
    Tool.objects.filter(name="carried").update(task_support="")
    transfer.import_document(document)
    assert Tool.objects.get(name="carried").task_support == "optional"


def test_code_tools_declare_it_and_default_to_forbidden() -> None:
    def slow_report(days: int) -> str:
        return "report"

    def quick(days: int) -> str:
        return "quick"

    try:
        code.tool(name="slow_report_t", task_support="required")(slow_report)
        code.tool(name="quick_t")(quick)
        assert code.TOOLS["slow_report_t"].definition.execution == {"taskSupport": "required"}
        assert code.TOOLS["quick_t"].definition.execution == {"taskSupport": "forbidden"}
        with pytest.raises(ValueError, match="task_support"):
            code.tool(name="bad_t", task_support="maybe")
    finally:
        for name in ("slow_report_t", "quick_t"):
            code.TOOLS.pop(name, None)


TASKS = {"tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}}


@pytest.mark.parametrize(("declared", "listed", "served"), [
    (TASKS, "required", "required"),
    (TASKS, "optional", "optional"),
    (TASKS, None, "forbidden"),
    ({"tools": {}}, "required", "forbidden"),  # no task-augmented tools/call: MUST NOT augment
])
def test_a_mirrored_tool_serves_its_upstreams_task_support_where_the_upstream_declared_tasks(
        declared: dict[str, Any], listed: str | None, served: str) -> None:
    """Issue 40 item 4: the upstream's ``execution.taskSupport``, honoured only with its
    ``tasks.requests.tools.call`` capability (2025-11-25 tasks.mdx "Tool-Level Negotiation");
    the operator's task support wins over it."""
    from registry.models import Upstream

    upstream = Upstream.objects.create(name="u", prefix="u", url="http://127.0.0.1:1/mcp",
                                       server_info={"capabilities": declared})
    tool = Tool.objects.create(name="u_t", description="d", kind="upstream", upstream=upstream,
                               upstream_name="t", input_schema={"type": "object", "properties": {}},
                               execution={"taskSupport": listed} if listed else None)
    assert tool.effective_task_support == served
    tool.task_support = "forbidden"
    assert tool.effective_task_support == "forbidden"
