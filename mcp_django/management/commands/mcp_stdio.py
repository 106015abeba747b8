"""``python manage.py mcp_stdio``: serve MCP over stdin/stdout for a local client.

The provider and bus come from the ``MCP`` setting, exactly as for the HTTP endpoint. Before any
code can print, file descriptor 1 is duplicated for the protocol and then pointed at stderr, so a
stray ``print`` (ours, a library's, a C extension's) can never corrupt the JSON-RPC stream
(2025-11-25 basic/transports.mdx: "The server MUST NOT write anything to its stdout that is not a
valid MCP message"). Exits with status 0 when the client closes stdin, and with status 1 and one
line on stderr when the provider cannot read its database (not migrated: see ``--prepare``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from mcp_django.conf import build_approvals, build_server, mcp_settings
from mcp_protocol.bus.base import Bus
from mcp_protocol.transports.stdio import serve


class Command(BaseCommand):
    help = "Serve the Model Context Protocol over stdin/stdout (newline-delimited JSON-RPC)."
    # System checks may print; they are run by the HTTP server's startup instead.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--prepare",
            action="store_true",
            help="Apply pending migrations and load the demo registry into an empty database first "
            "(a one-line setup for a local client's config). Output goes to stderr.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        sys.stdout.flush()
        protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)  # from here on, anything written to fd 1 lands on stderr
        sys.stdout = sys.stderr
        if options["prepare"]:
            self._prepare()
        try:
            asyncio.run(self._serve(protocol_out))
        except KeyboardInterrupt:
            pass
        finally:
            protocol_out.close()

    def _prepare(self) -> None:
        call_command("migrate", interactive=False, verbosity=0, stdout=sys.stderr)
        # By name, so the protocol package stays independent of the app that provides it.
        if "load_demo" in get_commands():
            call_command("load_demo", if_empty=True, stdout=sys.stderr)

    async def _serve(self, out: Any) -> None:
        provider = mcp_settings.backend("PROVIDER")
        await self._check_provider(provider)
        bus: Bus | None
        try:
            bus = mcp_settings.backend("BUS")
        except ImportError:  # a bus backend that is not installed: serve without live changes
            self.stderr.write("MCP bus backend unavailable; definition changes will not be pushed")
            bus = None
        try:
            await serve(build_server(provider, approvals=build_approvals(bus)), provider, out, bus)
        finally:
            if bus is not None:
                await bus.close()

    async def _check_provider(self, provider: Any) -> None:
        """Build the provider's first snapshot before serving, so a database that is not ready
        (never migrated: "no such table") is one clear line on stderr and exit status 1, not a
        traceback from inside the session. (``serve`` refreshes again once subscribed to changes.)
        """
        try:
            await provider.refresh()
        except DatabaseError as exc:
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise CommandError(
                f"the database is not ready ({reason}): run `python manage.py migrate` first, "
                "or start with `python manage.py mcp_stdio --prepare`"
            ) from None
