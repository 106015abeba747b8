"""The admin's app preview (``<id>/app-view/``) is for whoever may view the resource (issue 37
item 7): a staff user without the resource view permission gets 403, not the view's HTML; an id
that is no primary key is a 404, never a 500."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from registry.models import Resource

pytestmark = pytest.mark.django_db

HTML = "<html><body>internal dashboard</body></html>"


@pytest.fixture
def view() -> Resource:
    return Resource.objects.create(uri="ui://team/dashboard.html", name="dashboard",
                                   mime_type="text/html;profile=mcp-app", text=HTML)


def signed_in(name: str, *codenames: str) -> Client:
    user = User.objects.create_user(name, password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def test_a_staff_user_without_the_resource_view_permission_gets_403(view: Resource) -> None:
    answer = signed_in("nobody").get(f"/admin/registry/resource/{view.pk}/app-view/")
    assert answer.status_code == 403 and b"internal dashboard" not in answer.content


def test_a_staff_user_who_may_view_resources_sees_the_preview(view: Resource) -> None:
    answer = signed_in("viewer", "view_resource").get(f"/admin/registry/resource/{view.pk}/app-view/")
    assert answer.status_code == 200 and b"internal dashboard" in answer.content


@pytest.mark.parametrize("odd", ["abc", "-1", "0", "99999999999999999999999", "1.5"])
def test_an_odd_id_is_a_404(view: Resource, odd: str) -> None:
    viewer = signed_in("viewer", "view_resource")
    assert viewer.get(f"/admin/registry/resource/{odd}/app-view/").status_code == 404
