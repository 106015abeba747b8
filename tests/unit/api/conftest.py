"""Fixtures for the management API tests: DRF's test client as a superuser, as a staff user with
some model permissions, and anonymous; a management API token."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.core.cache import cache
from rest_framework.test import APIClient

from registry.tokens import ManagementToken

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
