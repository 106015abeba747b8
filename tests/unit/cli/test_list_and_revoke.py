"""``mcp_keys list`` and ``management_tokens list`` print a header over aligned columns;
``mcp_keys list --status`` filters; ``management_tokens revoke`` makes a token stop working on the
management API at once, and refuses an unknown id without revoking anything."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from access.models import ApiKey
from management_api.tokens import ManagementToken

pytestmark = pytest.mark.django_db


def run(*argv: str) -> list[str]:
    out = io.StringIO()
    call_command(*argv, stdout=out)
    return out.getvalue().splitlines()


def test_mcp_keys_list_prints_a_header_and_one_aligned_row_per_key() -> None:
    key, _ = ApiKey.issue("ci bot")
    lines = run("mcp_keys", "list")
    assert lines[0].split() == ["KEY", "STATUS", "OWNER", "EXPIRES", "LAST", "USED", "NAME"]
    assert len(lines) == 2 and lines[1].startswith(f"mcp_{key.prefix}_…") and lines[1].endswith("ci bot")
    assert lines[1].index("active") == lines[0].index("STATUS")  # the column is under its header


def test_mcp_keys_list_with_a_status_shows_only_the_keys_in_that_state() -> None:
    active, _ = ApiKey.issue("live")
    expired, _ = ApiKey.issue("old", expires_at=timezone.now() - timedelta(days=1))
    revoked, _ = ApiKey.issue("gone")
    revoked.revoke()
    for status, key in (("active", active), ("expired", expired), ("revoked", revoked)):
        rows = run("mcp_keys", "list", "--status", status)[1:]
        assert [row.split()[0] for row in rows] == [f"mcp_{key.prefix}_…"], status
        assert rows[0].split()[1] == status


def test_management_tokens_list_shows_each_token_with_a_header_but_never_the_token() -> None:
    alice = get_user_model().objects.create_user("alice", is_staff=True)
    bob = get_user_model().objects.create_user("bob", is_staff=True)
    mine, token = ManagementToken.issue(alice, "CI deploy")
    ManagementToken.issue(bob, "backup")
    lines = run("management_tokens", "list")
    assert lines[0].split() == ["ID", "USER", "HINT", "EXPIRES", "LAST", "USED", "NAME"]
    assert len(lines) == 3 and token not in "\n".join(lines)
    only_alice = run("management_tokens", "list", "--user", "alice")
    assert len(only_alice) == 2 and only_alice[1].split()[:3] == [str(mine.pk), "alice", f"{mine.hint}…"]
    assert only_alice[1].endswith("CI deploy")


def test_a_token_revoked_from_the_cli_is_refused_by_the_api(client: Client) -> None:
    alice = get_user_model().objects.create_superuser("alice", "alice@example.com", "pw")
    row, token = ManagementToken.issue(alice, "CI deploy")
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    assert client.get("/api/v1/tools/", **bearer).status_code == 200
    assert run("management_tokens", "revoke", str(row.pk)) == [f"Revoked {row} of alice."]
    assert client.get("/api/v1/tools/", **bearer).status_code == 401
    assert ManagementToken.authenticate(token) is None


def test_revoking_an_unknown_id_revokes_nothing_and_says_which() -> None:
    alice = get_user_model().objects.create_user("alice", is_staff=True)
    row, _ = ManagementToken.issue(alice, "CI deploy")
    with pytest.raises(CommandError, match=r"no management API token with id 999"):
        call_command("management_tokens", "revoke", str(row.pk), "999", stdout=io.StringIO())
    assert ManagementToken.objects.filter(pk=row.pk).exists()
