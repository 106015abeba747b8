"""Fixtures of the security tests (issue 24): users of each kind, and the management token model
found by name, so each test fails on the code before its fix for the reason it names (not because
a module moved)."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import Permission, User
from django.urls import reverse


@pytest.fixture
def superuser(db: None) -> User:
    return User.objects.create_superuser("root", "root@example.com", "pw")


@pytest.fixture
def token_model() -> Any:
    return next(m for m in apps.get_models() if m.__name__ == "ManagementToken")


@pytest.fixture
def token_admin_url(token_model: Any) -> str:
    return reverse(f"admin:{token_model._meta.app_label}_{token_model._meta.model_name}_add")


@pytest.fixture
def token_clerk(db: None) -> User:
    """A staff user who may add, view and delete management API tokens, and nothing else."""
    user = User.objects.create_user("clerk", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(
        codename__in=["add_managementtoken", "view_managementtoken", "delete_managementtoken"]))
    return user
