"""Move the Redis audit spool into ``AuditRecord`` (``access/drain.py``): run one or more beside
the workers whenever ``MCP_AUDIT_SINK=redis``; ``--once`` drains what waits and exits (cron, tests)."""

from __future__ import annotations

import argparse
import gc
import signal
import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from access.drain import BATCH, Drain
from mcp_django.conf import access_settings
from mcp_protocol.redis_client.options import RedisOptions


class Command(BaseCommand):
    help = "Write the Redis audit spool's entries to the audit log (long-running; --once to drain and exit)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="drain what waits, then exit")
        parser.add_argument("--batch", type=int, default=BATCH, help="entries per read and transaction")
        parser.add_argument("--claim-after", type=float, default=60.0,
                            help="seconds before entries another drain read and never acknowledged "
                                 "are taken over (it died)")
        parser.add_argument("--linger", type=float, default=0.25,
                            help="seconds to wait for more entries after a batch short of --batch "
                                 "(fewer, fuller transactions; rows land at most this much later)")
        parser.add_argument("--consumer", help="this drain's consumer name (default host-pid)")
        # Fault tests only: stop between the commit and the acknowledgement, to be killed there.
        parser.add_argument("--hold-after-commit", type=float, default=0.0, help=argparse.SUPPRESS)

    def handle(self, *args: Any, **options: Any) -> None:
        bounds = (("--batch", options["batch"], 1), ("--claim-after", options["claim_after"], 0),
                  ("--linger", options["linger"], 0))
        for name, value, least in bounds:
            if value < least:
                raise CommandError(f"{name} must be at least {least:g}, not {value:g}")
        access = access_settings()
        if access.get("AUDIT_SINK") != "access.spool.RedisSpoolSink":
            raise CommandError("the audit log is not spooled to Redis (MCP_AUDIT_SINK=redis): "
                               "nothing to drain")
        hold = float(options["hold_after_commit"])

        def held(count: int) -> None:
            self.stdout.write(f"committed {count}")
            self.stdout.flush()
            time.sleep(hold)

        # The spool the sink writes: its prefix and its Redis (the sink's other options are its own).
        spool = dict(access.get("AUDIT_SINK_OPTIONS") or {})
        drain = Drain(prefix=spool.get("prefix", "mcp"), redis=RedisOptions.take(None, spool),
                      batch=options["batch"],
                      claim_after=options["claim_after"], linger=options["linger"],
                      consumer=options["consumer"],
                      after_commit=held if hold else None)
        # What the process holds now (Django, the apps, their modules) lives as long as it does:
        # out of the collector's way, so a full collection scans only what the drain makes.
        gc.freeze()
        stopping = False

        def stop(*_: Any) -> None:
            nonlocal stopping
            stopping = True  # the current step ends (its read blocks at most 2 s), then we exit

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        totals = drain.run(once=options["once"], stop=lambda: stopping)
        per_row = totals.cpu_seconds / totals.written * 1e6 if totals.written else 0.0
        self.stdout.write(f"drained {totals.written} entries ({totals.claimed} taken over, "
                          f"{totals.malformed} malformed) in {totals.batches} batches, "
                          f"{per_row:.1f} us CPU per entry")
        sys.stdout.flush()
