"""A virtual server's preview and members (issue 39 item 7) give nothing a staff user's permissions
do not: the preview needs ``view_virtualserver``, and a server's permission is not a tool's: the
lists and members of a kind the user may not view are withheld (docs/security.md
"Virtual servers: the admin and the REST API")."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from registry.models import Tool, VirtualServer

pytestmark = pytest.mark.django_db

CANARY = "CANARY-7b0d"


@pytest.fixture
def server(db: None) -> VirtualServer:
    Tool.objects.create(name="payroll", description=CANARY, kind="template", template_text="hi",
                        input_schema={"type": "object", "properties": {}}, tags=["hr"])
    return VirtualServer.objects.create(slug="hr", name="hr", include_tags=["hr"])


def staff(*codenames: str) -> User:
    user = User.objects.create_user(f"staff-{'-'.join(codenames) or 'none'}", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return user


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def preview_url(row: VirtualServer) -> str:
    return reverse("admin:registry_virtualserver_preview", args=[row.pk])


def test_a_staff_user_without_view_virtualserver_cannot_read_the_preview(server: VirtualServer) -> None:
    answer = signed_in(staff("view_tool", "change_tool")).get(preview_url(server))
    assert answer.status_code == 403
    assert CANARY.encode() not in answer.content


def test_anonymous_is_sent_to_the_login_and_an_odd_id_is_a_404(server: VirtualServer) -> None:
    anonymous = Client().get(preview_url(server))
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/admin/login/")
    reader = signed_in(staff("view_virtualserver"))
    for odd in ("abc", "-1", "99999999999999999999", ".."):
        url = reverse("admin:registry_virtualserver_preview", args=["0"]).replace("/0/", f"/{odd}/")
        assert reader.get(url).status_code == 404, odd


def test_the_preview_withholds_the_lists_of_kinds_the_user_may_not_view(server: VirtualServer) -> None:
    answer = signed_in(staff("view_virtualserver")).get(preview_url(server))
    assert answer.status_code == 200
    assert CANARY.encode() not in answer.content and b"payroll" not in answer.content
    newest = json.loads(answer.context["revisions"][0]["json"])
    assert newest["tools/list"] == "1 items, not shown: you may not view all of them"
    assert newest["prompts/list"] == []  # nothing of that kind is served: nothing withheld
    allowed = signed_in(staff("view_virtualserver", "view_tool")).get(preview_url(server))
    assert CANARY.encode() in allowed.content


def test_the_api_leaves_out_members_of_kinds_the_caller_may_not_view(server: VirtualServer) -> None:
    reader = APIClient()
    reader.force_login(staff("view_virtualserver"))
    body = reader.get("/api/v1/servers/hr/").json()
    assert "tools" not in body["members"] and "payroll" not in json.dumps(body)
    both = APIClient()
    both.force_login(staff("view_virtualserver", "view_tool"))
    assert both.get("/api/v1/servers/hr/").json()["members"]["tools"] == ["payroll"]


def test_a_user_who_may_only_view_cannot_change_a_server_in_the_admin(server: VirtualServer) -> None:
    reader = signed_in(staff("view_virtualserver"))
    url = reverse("admin:registry_virtualserver_change", args=[server.pk])
    assert reader.post(url, {"slug": "taken", "name": "x"}).status_code == 403
    assert VirtualServer.objects.get(pk=server.pk).slug == "hr"


def test_the_preview_search_box_ranks_nothing_for_a_user_who_may_not_view_tools(
    server: VirtualServer,
) -> None:
    # Issue 41: the search box shows tool names, scores and descriptions: a tool's view permission.
    server.tool_search = "on"
    server.save()
    answer = signed_in(staff("view_virtualserver")).get(preview_url(server), {"q": "payroll"})
    assert answer.status_code == 200 and answer.context["hits"] is None
    page = answer.content.replace(b'value="payroll"', b"")  # the query typed, echoed in its box
    assert CANARY.encode() not in page and b"payroll" not in page
    allowed = signed_in(staff("view_virtualserver", "view_tool")).get(preview_url(server), {"q": "payroll"})
    assert [name for name, _, _ in allowed.context["hits"]] == ["payroll"]
    assert CANARY.encode() in allowed.content
