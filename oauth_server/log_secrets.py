"""No secret of the authorization server reaches a log, whatever the log level (issue 37 item 7;
RFC 9700 §4.14 on token leakage, OWASP Logging Cheat Sheet: never log session ids or tokens).

- oauthlib and django-oauth-toolkit log authorization codes, access and refresh tokens and whole
  request bodies at DEBUG. Their loggers are pinned at INFO or above (``levels``, in the
  project's ``LOGGING``): nothing they log above DEBUG carries a secret.
- Django's SQL log (DEBUG, with ``DJANGO_DEBUG=1``) prints each statement's parameters: the
  toolkit keeps an authorization code as given (``oauth2_provider_grant.code``) and looks tokens
  up by value. ``NoOAuthSQL`` drops the statements on the toolkit's tables.

Imported by the logging configuration: no model, nothing of Django's app registry.
"""

from __future__ import annotations

import logging

# The libraries whose DEBUG lines hold codes and tokens.
CHATTY = ("oauthlib", "oauth2_provider")
TABLES = "oauth2_provider_"


def levels(root_level: str) -> dict[str, dict[str, str]]:
    """``LOGGING["loggers"]`` entries for ``CHATTY``: the root's level, never below INFO."""
    wanted = logging.getLevelName(str(root_level).upper())
    level = wanted if isinstance(wanted, int) and wanted > logging.INFO else logging.INFO
    return {name: {"level": logging.getLevelName(level)} for name in CHATTY}


class NoOAuthSQL(logging.Filter):
    """Drops ``django.db.backends`` records of statements on the toolkit's tables."""

    def filter(self, record: logging.LogRecord) -> bool:
        return TABLES not in str(getattr(record, "sql", ""))
