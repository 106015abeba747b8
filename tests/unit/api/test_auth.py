"""Who may use the management API: management API tokens (hashed at rest), session login, staff
and model permissions, throttles, and the cache the throttles count in."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from management_api.tokens import ManagementToken, digest

from .conftest import TEMPLATE_TOOL, client_for, staff_with

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_a_management_token_authenticates_and_only_its_digest_is_stored(token: str) -> None:
    assert token.startswith("mcpm_") and len(token) > 40
    row = ManagementToken.objects.get()
    assert row.digest == digest(token) and token not in {row.digest, row.hint, row.name}
    answer = bearer(token).post("/api/v1/tools/", TEMPLATE_TOOL, format="json")
    assert answer.status_code == 201
    row.refresh_from_db()
    assert row.last_used_at is not None


def test_bad_expired_and_revoked_tokens_get_401(superuser: User, token: str) -> None:
    assert bearer(token + "x").get("/api/v1/tools/").status_code == 401
    old, expired = ManagementToken.issue(superuser, "old", timezone.now() + timedelta(days=1))
    ManagementToken.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert bearer(expired).get("/api/v1/tools/").status_code == 401
    superuser.is_active = False
    superuser.save()
    assert bearer(token).get("/api/v1/tools/").status_code == 401
    superuser.is_active = True
    superuser.save()
    ManagementToken.objects.all().delete()  # revoked
    answer = bearer(token).get("/api/v1/tools/")
    assert answer.status_code == 401 and answer["WWW-Authenticate"] == 'Bearer realm="api"'


def test_anonymous_callers_get_401_and_other_bearer_schemes_are_not_ours(db: None) -> None:
    assert APIClient().get("/api/v1/tools/").status_code == 401
    assert bearer("some-oauth-token").get("/api/v1/tools/").status_code == 401


def test_a_staff_user_who_may_only_view_tools_reads_them_and_gets_403_on_writes(api: APIClient) -> None:
    url = f"/api/v1/tools/{api.post('/api/v1/tools/', TEMPLATE_TOOL, format='json').json()['id']}/"
    viewer = client_for(staff_with("view_tool"))
    assert viewer.get("/api/v1/tools/").status_code == 200
    assert viewer.get(url).status_code == 200
    assert viewer.post("/api/v1/tools/", {**TEMPLATE_TOOL, "name": "other"}, format="json").status_code == 403
    assert viewer.patch(url, {"title": "x"}, format="json").status_code == 403
    assert viewer.delete(url).status_code == 403
    assert viewer.get("/api/v1/prompts/").status_code == 403  # no view_prompt
    editor = client_for(staff_with("view_tool", "change_tool"))
    assert editor.patch(url, {"title": "x"}, format="json").status_code == 200
    assert editor.delete(url).status_code == 403


def test_users_who_are_not_staff_get_403_even_with_permissions(db: None) -> None:
    user = staff_with("view_tool")
    user.is_staff = False
    user.save()
    assert client_for(user).get("/api/v1/tools/").status_code == 403


def test_session_writes_need_the_csrf_token_as_in_the_browsable_api(superuser: User) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(superuser)
    answer = client.post("/api/v1/tools/", TEMPLATE_TOOL, format="json")
    assert answer.status_code == 403 and "CSRF" in answer.json()["detail"]


def test_throttles_answer_429_past_the_rate(token: str) -> None:
    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "user": "3/minute"}
    with override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}):
        client = bearer(token)
        assert [client.get("/api/v1/tools/").status_code for _ in range(4)] == [200, 200, 200, 429]
        assert "Retry-After" in client.get("/api/v1/tools/")
        # Counted per user: another user still has its own allowance.
        assert client_for(staff_with("view_tool")).get("/api/v1/tools/").status_code == 200


def test_create_management_token_prints_a_working_token_once(
        superuser: User, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("create_management_token", "--user", "root", "--name", "CI", "--days", "1")
    token = capsys.readouterr().out.strip()
    assert bearer(token).get("/api/v1/tools/").status_code == 200
    assert ManagementToken.objects.get().expires_at is not None


def test_the_cache_is_django_redis_with_redis_url_and_locmem_without() -> None:
    def caches(**env: str) -> dict[str, object]:
        code = "import json, django; django.setup(); from django.conf import settings; " \
               "print(json.dumps(settings.CACHES['default']))"
        base = {k: v for k, v in __import__("os").environ.items() if k not in ("REDIS_URL", "MCP_REDIS_MODE")}
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                             env={**base, "DJANGO_SETTINGS_MODULE": "mcpsite.settings", **env}, timeout=60)
        return dict(json.loads(out.stdout))

    assert caches()["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"
    shared = caches(REDIS_URL="redis://127.0.0.1:6379/3", MCP_KEY_PREFIX="mine")
    assert shared["BACKEND"] == "django_redis.cache.RedisCache"
    assert (shared["LOCATION"], shared["KEY_PREFIX"]) == ("redis://127.0.0.1:6379/3", "mine:cache")


def test_a_token_added_in_the_admin_is_shown_once_and_works(admin_client: object, admin_user: User) -> None:
    from django.test import Client

    assert isinstance(admin_client, Client)
    answer = admin_client.post("/admin/management_api/managementtoken/add/",
                               {"user": admin_user.pk, "name": "CI"})
    assert answer.status_code == 200
    (token,) = re.findall(r"mcpm_[A-Za-z0-9_-]{43}", answer.content.decode())
    assert bearer(token).get("/api/v1/tools/").status_code == 200
    assert token not in admin_client.get("/admin/management_api/managementtoken/").content.decode()
