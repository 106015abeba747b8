"""``MCP_LOG_FORMAT=json``: one JSON object per log line, for log shippers.

Fields: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, ``exc`` (a traceback, when
there is one), and inside a ``/mcp`` request ``request_id``, ``session`` (truncated) and
``principal`` (``mcp_protocol/transports/logcontext.py``), and with tracing on ``trace_id`` and
``span_id`` of the request's span (``mcp_protocol/tracing/``). Headers, bodies and tokens are never
logged: only what the message itself says.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from mcp_protocol import tracing
from mcp_protocol.transports import logcontext


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **logcontext.fields(),
            **tracing.log_fields(),  # trace_id and span_id while a traced request runs
        }
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)
