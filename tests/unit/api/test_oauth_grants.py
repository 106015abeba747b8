"""``/api/v1/oauth-grants/`` (``management_api/oauth_grants.py``): staff see what users authorized
the built-in authorization server's clients to do, filter it, and revoke a grant with its family."""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, RefreshToken
from rest_framework.test import APIClient

from oauth_server.models import OAuthEvent


def grant(user: User, app: Application, scope: str, family: uuid.UUID) -> RefreshToken:
    access = AccessToken.objects.create(
        user=user,
        application=app,
        scope=scope,
        token=uuid.uuid4().hex,
        expires=timezone.now() + timedelta(minutes=10),
    )
    return RefreshToken.objects.create(
        user=user, application=app, access_token=access, token=uuid.uuid4().hex, token_family=family
    )


def test_staff_list_filter_and_revoke_grants(api: APIClient) -> None:
    alice = User.objects.create_user("alice", password="pw")
    bob = User.objects.create_user("bob", password="pw")
    app = Application.objects.create(
        client_id="claude",
        name="Claude",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="https://x.example/cb",
    )
    family = uuid.uuid4()
    first = grant(alice, app, "mcp", family)
    grant(bob, app, "mcp:echo", uuid.uuid4())
    rows = api.get("/api/v1/oauth-grants/").json()["results"]
    assert {(r["user"], r["client_id"], r["scope"]) for r in rows} == {
        ("alice", "claude", "mcp"),
        ("bob", "claude", "mcp:echo"),
    }
    assert [r["user"] for r in api.get("/api/v1/oauth-grants/", {"user": "bob"}).json()["results"]] == ["bob"]
    assert api.delete(f"/api/v1/oauth-grants/{first.pk}/").status_code == 204
    first.refresh_from_db()
    assert first.revoked is not None and not AccessToken.objects.filter(user=alice).exists()
    assert [r["user"] for r in api.get("/api/v1/oauth-grants/").json()["results"]] == ["bob"]
    assert OAuthEvent.objects.filter(kind="revoked", client_id="claude").exists()


def test_only_staff_see_grants(db: None) -> None:
    client = APIClient()
    client.force_login(User.objects.create_user("carol", password="pw"))
    assert client.get("/api/v1/oauth-grants/").status_code == 403
