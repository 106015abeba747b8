"""Issue 24, item 1 (High): a staff user who may add management API tokens could add one for the
superuser in the admin, and act as the superuser with it. A staff user now adds tokens only for
themselves (superusers for anyone); ``create_management_token``, run with shell access, names its
user explicitly and refuses one the API would refuse. (There is no token endpoint in the REST API.)"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_staff_user_cannot_mint_a_token_for_the_superuser(
    client: Client, superuser: User, token_clerk: User, token_model: Any, token_admin_url: str
) -> None:
    client.force_login(token_clerk)
    answer = client.post(token_admin_url, {"user": superuser.pk, "name": "mine now"})
    assert answer.status_code in (200, 403)  # the form again, with its error; or refused outright
    assert not token_model.objects.filter(user=superuser).exists()
    # Their own token they may add.
    client.post(token_admin_url, {"user": token_clerk.pk, "name": "mine"})
    assert token_model.objects.filter(user=token_clerk, name="mine").exists()


def test_the_token_add_form_offers_a_staff_user_only_themselves(
    client: Client, superuser: User, token_clerk: User, token_admin_url: str
) -> None:
    client.force_login(token_clerk)
    field = client.get(token_admin_url).context["adminform"].form.fields["user"]
    assert list(field.queryset) == [token_clerk]
    client.force_login(superuser)  # a superuser may add tokens for anyone
    field = client.get(token_admin_url).context["adminform"].form.fields["user"]
    assert set(field.queryset) == {superuser, token_clerk}


def test_create_management_token_needs_its_user_named_with_user(superuser: User) -> None:
    with pytest.raises(CommandError):
        call_command("create_management_token", "root", "--name", "CI")  # no positional user
    call_command("create_management_token", "--user", "root", "--name", "CI")


@pytest.mark.parametrize("kind", ["not staff", "inactive"])
def test_create_management_token_refuses_a_user_the_api_would_refuse(kind: str, token_model: Any) -> None:
    User.objects.create_user("someone", password="pw", is_staff=kind != "not staff",
                             is_active=kind != "inactive")
    with pytest.raises(CommandError, match="not active staff"):
        call_command("create_management_token", "--user", "someone", "--name", "CI")
    assert not token_model.objects.exists()


# Issue 24, item 12: ``create_management_token --days -5`` issued a token that had already
# expired (and ``--days 0`` one that never expires); every command validates its arguments and
# runs the model's own validation.
@pytest.mark.parametrize("days", ["-5", "0", "nan", "inf", "1e9"])
def test_create_management_token_refuses_days_that_are_not_a_positive_bounded_number(
    days: str, superuser: User, token_model: Any
) -> None:
    with pytest.raises(CommandError, match="--days"):
        call_command("create_management_token", "--user", "root", "--name", "CI", "--days", days)
    assert not token_model.objects.exists()


def test_create_management_token_runs_the_models_validation(superuser: User, token_model: Any) -> None:
    with pytest.raises(CommandError, match="name"):
        call_command("create_management_token", "--user", "root", "--name", "x" * 129)
    with pytest.raises(CommandError, match="name"):
        call_command("create_management_token", "--user", "root", "--name", "")
    assert not token_model.objects.exists()


def test_staff_user_neither_sees_nor_revokes_another_users_tokens(
    client: Client, superuser: User, token_clerk: User, token_model: Any
) -> None:
    theirs, _ = token_model.issue(superuser, "root's CI")
    mine, _ = token_model.issue(token_clerk, "clerk's CI")
    meta = token_model._meta
    client.force_login(token_clerk)
    listing = client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
    assert listing.status_code == 200
    assert list(listing.context["cl"].queryset) == [mine]
    delete = reverse(f"admin:{meta.app_label}_{meta.model_name}_delete", args=[theirs.pk])
    client.post(delete, {"post": "yes"})
    assert token_model.objects.filter(pk=theirs.pk).exists()
    client.force_login(superuser)  # a superuser sees every token
    listing = client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
    assert set(listing.context["cl"].queryset) == {theirs, mine}
