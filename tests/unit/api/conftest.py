"""Fixtures for the management API tests: DRF's test client as a superuser, as a staff user with
some model permissions, and anonymous; a management API token."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import django
import pytest
from django.contrib.auth.models import Permission, User
from django.core.cache import cache
from rest_framework.test import APIClient

from management_api.tokens import ManagementToken

# The property tests run once, on the pinned Django (the second, Django 6 run of
# scripts/test-django6.sh would double their minute), and only where schemathesis is installed.
collect_ignore = (
    [] if django.VERSION[0] < 6 and importlib.util.find_spec("schemathesis") else ["test_properties.py"]
)

TEMPLATE_TOOL: dict[str, Any] = {
    "name": "api_tool",
    "description": "Made through the API",
    "kind": "template",
    "template_text": "Hello {{ who }}",
    "input_schema": {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
}


@pytest.fixture(autouse=True)
def fresh_throttles() -> Iterator[None]:
    cache.clear()  # locmem in the unit tests: the counts of one test never leak into the next
    yield
    cache.clear()


@pytest.fixture
def superuser(db: None) -> User:
    return User.objects.create_superuser("root", "root@example.com", "pw")


@pytest.fixture
def api(superuser: User) -> APIClient:
    client = APIClient()
    client.force_login(superuser)
    return client


def staff_with(*codenames: str) -> User:
    user = User.objects.create_user(f"staff-{'-'.join(codenames) or 'none'}", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return user


def client_for(user: User) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def token(superuser: User) -> str:
    return ManagementToken.issue(superuser, "tests")[1]
