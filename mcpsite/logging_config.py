"""The ``LOGGING`` configuration: every line to stderr (stdout belongs to the stdio transport),
plain or one JSON object per line (``logformat.py``), the discovery probes' 404s kept quiet, and
uvicorn's own loggers routed through ours in JSON mode. ``settings.py`` reads the environment.
"""

from __future__ import annotations

import logging
from typing import Any

from oauth_server import log_secrets  # imports no model


def logging_config(log_format: str, level: str) -> dict[str, Any]:
    """``LOGGING`` for ``MCP_LOG_FORMAT`` (``plain`` or ``json``) and ``MCP_LOG_LEVEL``."""
    config: dict[str, Any] = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
            "json": {"()": "mcpsite.logformat.JSONFormatter"},
        },
        # stderr only: stdout belongs to the stdio transport.
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                # MCP_LOG_FORMAT=json: one JSON object per line (mcpsite/logformat.py).
                "formatter": "json" if log_format == "json" else "plain",
            }
        },
        "root": {"handlers": ["stderr"], "level": level},
        # OAuth discovery probes of clients such as mcp-remote, answered 404 (MCP_AUTH=keys): no
        # WARNING line per probe (mcpsite/discovery_probes.py).
        "filters": {
            "discovery_probes": {"()": "mcpsite.discovery_probes.QuietDiscoveryProbes"},
            "no_oauth_sql": {"()": "oauth_server.log_secrets.NoOAuthSQL"},
        },
        "loggers": {
            "django.request": {"filters": ["discovery_probes"]},
            # No code or token of the authorization server in any log at any level (issue 37 item
            # 7, oauth_server/log_secrets.py): oauthlib's and the toolkit's DEBUG lines, and the SQL
            # log's parameters on the toolkit's tables.
            **log_secrets.levels(level),
            "django.db.backends": {"filters": ["no_oauth_sql"]},
            # Django's own "django" logger has a console handler of its own (in DEBUG) and propagates
            # to the root's: every line of runserver (daphne's "django.channels.server") and every
            # "Not Found" came out twice, once bare and once formatted. Ours only, once.
            "django": {"handlers": ["stderr"], "propagate": False},
        },
    }
    if log_format == "json":
        # uvicorn's loggers have handlers of their own (set before Django starts): route them through
        # ours, so that every line of a worker's stderr is JSON, not only the project's.
        # uvicorn.access only when uvicorn gave it a handler: --no-access-log must stay off (and not
        # "uvicorn" itself: configuring a parent resets its children, access log included).
        access = ("uvicorn.access",) if logging.getLogger("uvicorn.access").handlers else ()
        config["loggers"].update({
            name: {"handlers": ["stderr"], "propagate": False}
            for name in ("uvicorn.error", *access)
        })
    return config
