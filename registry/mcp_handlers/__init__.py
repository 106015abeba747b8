"""The registry's own handlers (demo and conformance), found by ``handlers.autodiscover`` like any
installed app's ``mcp_handlers`` module."""

from . import conformance, conformance_modern, conformance_tasks, demo  # noqa: F401  (importing registers them)
