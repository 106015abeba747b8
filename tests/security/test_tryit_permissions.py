"""Issue 24 item 6: the resource template "try it" page reads only URIs of its template, and only
what its user may view: a staff user who may try a template but not view resources does not read a
concrete resource (nor any other URI) through it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from registry.models import Resource, ResourceTemplate

pytestmark = pytest.mark.django_db

SECRET_IN_TEMPLATE_SPACE = "resource-text-under-the-template-7f3a"
SECRET_ELSEWHERE = "resource-text-elsewhere-91bc"


@pytest.fixture
def template() -> ResourceTemplate:
    Resource.objects.create(uri="demo://docs/internal", name="internal", text=SECRET_IN_TEMPLATE_SPACE)
    Resource.objects.create(uri="demo://plans/q3", name="plans", text=SECRET_ELSEWHERE)
    return ResourceTemplate.objects.create(uri_template="demo://docs/{name}", name="docs",
                                           text_template="the doc named {{ name }}")


def staff(*codenames: str) -> Client:
    user = User.objects.create_user("template-editor", password="x", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="registry",
                                                        codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def tried(client: Client, template: ResourceTemplate, uri: str) -> Any:
    response = client.post(reverse("admin:registry_resourcetemplate_try", args=[template.pk]), {"uri": uri})
    assert response.status_code == 200
    return response.content.decode()


def test_a_uri_outside_the_template_is_not_read(template: ResourceTemplate) -> None:
    client = staff("view_resourcetemplate", "change_resourcetemplate", "view_resource")
    page = tried(client, template, "demo://plans/q3")
    assert SECRET_ELSEWHERE not in page
    assert "does not match the template" in page


def test_a_concrete_resource_needs_the_resource_view_permission(template: ResourceTemplate) -> None:
    client = staff("view_resourcetemplate", "change_resourcetemplate")
    page = tried(client, template, "demo://docs/internal")
    assert SECRET_IN_TEMPLATE_SPACE not in page
    assert "which you may not view" in page


def test_what_the_template_serves_and_what_the_user_may_view_is_read(template: ResourceTemplate) -> None:
    client = staff("view_resourcetemplate", "change_resourcetemplate", "view_resource")
    assert "the doc named readme" in tried(client, template, "demo://docs/readme")
    assert SECRET_IN_TEMPLATE_SPACE in tried(client, template, "demo://docs/internal")


def test_without_the_template_change_permission_the_page_is_refused(template: ResourceTemplate) -> None:
    client = staff("view_resourcetemplate", "view_resource")
    url = reverse("admin:registry_resourcetemplate_try", args=[template.pk])
    assert client.post(url, {"uri": "demo://docs/readme"}).status_code == 403
