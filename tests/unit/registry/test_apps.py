"""MCP Apps (io.modelcontextprotocol/ui) in the registry: a ui:// view resource with its CSP and
permissions, a tool linking it (``_meta.ui`` on the wire), refused at save when the view's URI
is not ui://, and the demo registry's tool with an app."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from registry.models import Resource, Tool
from registry.provider import RegistryProvider
from registry.snapshot import build_state
from registry.validation.apps_ui import APP_MIME, content_security_policy

from .conftest import make_context

pytestmark = pytest.mark.django_db

VIEW = "ui://demo/greeting-card.html"


def errors_of(instance: Any) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as info:
        instance.full_clean()
    return info.value.message_dict


def view(**fields: Any) -> Resource:
    return Resource(**{"uri": "ui://v/view.html", "name": "view", "mime_type": APP_MIME, "kind": "text",
                       "text": "<p>hi</p>", **fields})


def test_an_app_view_whose_uri_is_not_ui_is_a_field_error() -> None:
    assert "ui://" in errors_of(view(uri="https://example.com/view.html"))["uri"][0]
    view().full_clean()


@pytest.mark.parametrize(("field", "value"), [
    ("ui_csp", {"connectDomains": ["not an origin"]}),
    ("ui_csp", {"scriptDomains": []}),
    ("ui_csp", {"connectDomains": ["https://a.example; script-src *"]}),
    ("ui_permissions", ["root"]),
])
def test_bad_csp_and_permissions_are_field_errors(field: str, value: Any) -> None:
    assert field in errors_of(view(**{field: value}))


def test_a_tool_linking_a_view_that_is_not_ui_is_a_field_error() -> None:
    tool = Tool(name="t", description="d", kind="template", template_text="x",
                ui_resource_uri="https://example.com/x.html")
    assert "ui_resource_uri" in errors_of(tool)
    assert "ui_visibility" in errors_of(Tool(name="t", description="d", kind="template", template_text="x",
                                             ui_resource_uri=VIEW, ui_visibility=["everyone"]))


def test_the_demo_tool_links_its_view_on_the_wire() -> None:
    from registry.transfer.fixtures import load_document, read_fixture

    load_document(read_fixture("demo"))
    snapshot = build_state().snapshot
    tool = snapshot.tool("greeting_card")
    assert tool is not None and tool.meta == {"ui": {"resourceUri": VIEW, "visibility": ["model", "app"]}}
    listed = snapshot.resource(VIEW)
    assert listed is not None and listed.mime_type == APP_MIME
    assert listed.meta is not None and listed.meta["ui"]["csp"]["connectDomains"] == []
    provider = RegistryProvider()
    provider.rebuild()  # in this thread, which sees the test's rows
    contents = asyncio.run(provider.read_resource(VIEW, make_context()))
    assert contents[0]["mimeType"] == APP_MIME and "<html>" in contents[0]["text"]
    assert contents[0]["_meta"]["ui"]["csp"] == listed.meta["ui"]["csp"]


def test_the_preview_csp_allows_only_what_is_declared() -> None:
    policy = content_security_policy({"connectDomains": ["https://api.example.com"]})
    assert "connect-src https://api.example.com" in policy and "default-src 'none'" in policy
    assert "frame-src 'none'" in policy and "https://evil.example" not in policy


def test_the_admin_previews_a_tools_app_in_a_sandboxed_iframe_under_its_csp(admin_client: Any) -> None:
    from registry.transfer.fixtures import load_document, read_fixture

    load_document(read_fixture("demo"))
    tool = Tool.objects.get(name="greeting_card")
    page = admin_client.get(f"/admin/registry/tool/{tool.pk}/change/").content.decode()
    resource = Resource.objects.get(uri=VIEW)
    src = f"/admin/registry/resource/{resource.pk}/app-view/"
    assert f'sandbox="allow-scripts" src="{src}"' in page
    served = admin_client.get(src)
    assert served.status_code == 200 and b"greeting" in served.content
    assert served["Content-Security-Policy"].endswith("; sandbox allow-scripts")
    assert "connect-src 'none'" in served["Content-Security-Policy"]
    assert served["X-Frame-Options"] == "SAMEORIGIN"
    other = Resource.objects.exclude(uri=VIEW).first()
    assert other is not None
    assert admin_client.get(f"/admin/registry/resource/{other.pk}/app-view/").status_code == 404
