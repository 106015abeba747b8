"""A definition's versions are its past states (a skill's files, an http tool's headers): reading
them takes the view (or change) permission on its kind as well as ``view_changeset``, in the REST
API and in the admin alike (found beside issue 37 item 5: history was a way round a kind's
permissions, as import and export were)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from rest_framework.test import APIClient

from registry.models import ChangeSet, Tool
from registry.skills.loading import replace_skill

pytestmark = pytest.mark.django_db


def staff(*codenames: str) -> User:
    user = User.objects.create_user(f"staff-{'-'.join(codenames) or 'none'}", is_staff=True)
    granted = Permission.objects.filter(content_type__app_label="registry", codename__in=codenames)
    user.user_permissions.add(*granted)
    return User.objects.get(pk=user.pk)  # permissions are cached per instance


@pytest.fixture
def tool() -> Tool:
    return Tool.objects.create(
        name="secretive", description="d", kind="template", template_text="hi",
        input_schema={"type": "object", "properties": {}},
    )


@pytest.mark.parametrize("codenames,status", [
    (("view_changeset",), 403),
    (("view_tool",), 403),
    (("view_changeset", "view_tool"), 200),
    (("view_changeset", "change_tool"), 200),
])
def test_the_version_list_and_a_version_need_the_kinds_permission_too(
    tool: Tool, codenames: tuple[str, ...], status: int
) -> None:
    client = APIClient()
    client.force_authenticate(staff(*codenames))
    listed = client.get(f"/api/v1/history/tools/{tool.pk}/")
    assert listed.status_code == status, listed.content
    version = tool.history.first().history_id if status == 200 else 1
    one = client.get(f"/api/v1/history/tools/{tool.pk}/{version}/")
    assert one.status_code == status, one.content
    if status == 403:
        assert b"secretive" not in listed.content + one.content


@pytest.mark.parametrize("codenames,status", [
    (("view_changeset",), 403),
    (("view_changeset", "view_tool"), 200),
])
def test_the_admins_history_page_needs_the_kinds_permission_too(
    tool: Tool, codenames: tuple[str, ...], status: int
) -> None:
    client = Client()
    client.force_login(staff(*codenames))
    page = client.get(f"/admin/registry/tool/{tool.pk}/history/")
    assert page.status_code == status


def test_a_change_set_shows_only_the_definitions_of_kinds_the_caller_may_view(tool: Tool) -> None:
    replace_skill("hidden", "---\nname: hidden\ndescription: files of a skill\n---\nsecret body\n", [])
    changeset = ChangeSet.objects.order_by("-id").first()
    assert changeset is not None
    api, admin = APIClient(), Client()
    viewer = staff("view_changeset", "view_tool")
    api.force_authenticate(viewer)
    admin.force_login(viewer)
    detail = api.get(f"/api/v1/history/{changeset.pk}/")
    assert detail.status_code == 200, detail.content
    # One transaction, one change set: the tool (readable) and the skill (not).
    assert [c["kind"] for c in detail.json()["changes"]] == ["tools"] and detail.json()["withheld"] == 1
    assert b"secret body" not in detail.content
    page = admin.get(f"/admin/registry/changeset/{changeset.pk}/change/")
    assert page.status_code == 200 and b"secret body" not in page.content
    assert b"1 definition of kinds you may not view" in page.content
    reader = staff("view_changeset", "view_skill")
    api.force_authenticate(reader)
    shown = api.get(f"/api/v1/history/{changeset.pk}/").json()
    assert [c["kind"] for c in shown["changes"]] == ["skills"] and shown["withheld"] == 1
