"""Issue 24, item 12: a new API key's or management API token's secret was shown through Django's
messages framework, so it travelled in the ``messages`` cookie (signed, not encrypted: it decodes
straight from ``Set-Cookie``). It is now shown once, in the body of the answer to the add POST:
never in a cookie, the session or a redirect, and not cached."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.messages.storage.cookie import CookieStorage
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import reverse

from access.models import ApiKey

pytestmark = pytest.mark.django_db
SECRET = re.compile(r"mcp_[0-9a-f]{8}_[A-Za-z0-9_-]{43}|mcpm_[A-Za-z0-9_-]{43}")
KEY_FORM = {"name": "ci", "owner": "", "expires_at_0": "", "expires_at_1": "", "tools": '["*"]',
            "resources": "[]", "prompts": "[]", "tags": "[]", "rate": "", "tool_rate": ""}


@pytest.fixture(params=["api key", "management token"])
def added(request: pytest.FixtureRequest, client: Client, superuser: User, token_model: Any,
          token_admin_url: str) -> tuple[HttpResponse, Any, Client]:
    """The answer to the admin's add POST of a new credential, and the stored row."""
    client.force_login(superuser)
    if request.param == "api key":
        answer = client.post(reverse("admin:access_apikey_add"), KEY_FORM)
        return answer, ApiKey.objects.get(name="ci"), client
    answer = client.post(token_admin_url, {"user": superuser.pk, "name": "CI"})
    return answer, token_model.objects.get(name="CI"), client


def _readable(value: str) -> str:
    """A cookie's value, and what it says if it is the messages cookie (signed, not encrypted)."""
    messages = CookieStorage(HttpRequest())._decode(value) or []
    return value + "".join(str(m) for m in messages)


def test_a_new_secret_is_never_in_a_cookie_or_the_session(added: tuple[HttpResponse, Any, Client]) -> None:
    answer, _, client = added
    for morsel in answer.cookies.values():
        assert not SECRET.search(_readable(morsel.value)), morsel.key
    assert not SECRET.search(repr(dict(client.session.items())))


def test_a_new_secret_is_shown_once_in_the_answer_to_the_add_and_not_cached(
    added: tuple[HttpResponse, Any, Client],
) -> None:
    answer, row, _ = added
    assert answer.status_code == 200 and not answer.has_header("Location")  # a page, not a redirect
    shown = SECRET.findall(answer.content.decode())
    assert len(shown) == 1 and hashlib.sha256(shown[0].encode()).hexdigest() == row.digest
    assert "no-store" in answer["Cache-Control"]
