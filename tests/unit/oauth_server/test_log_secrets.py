"""No code or token of the authorization server in a log at any level (oauth_server/log_secrets.py,
issue 37 item 7); the end-to-end case, a real server at DEBUG, is in
tests/integration/test_oauth_server_trust.py."""

from __future__ import annotations

import logging

import pytest

from oauth_server.log_secrets import NoOAuthSQL, levels


@pytest.mark.parametrize(("root", "pinned"), [("DEBUG", "INFO"), ("INFO", "INFO"), ("WARNING", "WARNING")])
def test_oauthlib_and_the_toolkit_never_log_below_info(root: str, pinned: str) -> None:
    assert levels(root) == {"oauthlib": {"level": pinned}, "oauth2_provider": {"level": pinned}}


def test_the_projects_settings_pin_them() -> None:
    for name in ("oauthlib", "oauth2_provider"):
        assert logging.getLogger(name).getEffectiveLevel() >= logging.INFO


def sql_record(sql: str) -> logging.LogRecord:
    record = logging.LogRecord("django.db.backends", logging.DEBUG, "", 0, "(0.001) %s", (sql,), None)
    record.sql = sql
    return record


def test_sql_on_the_toolkits_tables_is_dropped_and_other_sql_kept() -> None:
    grant = 'SELECT "oauth2_provider_grant"."code" FROM "oauth2_provider_grant" WHERE "code" = %s'
    assert not NoOAuthSQL().filter(sql_record(grant))
    assert NoOAuthSQL().filter(sql_record('SELECT 1 FROM "registry_tool"'))
