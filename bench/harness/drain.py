"""The audit spool's drain (``manage.py drain_audit``) as the fleet runs it, beside a keyed server
under test: a process of its own, its CPU counted from the first measured round until the spool is
empty, per row it wrote (moved work, not removed work)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import redis as redis_lib

from . import ROOT
from .servers import cpu_seconds

SPOOL_PREFIX = f"bench-audit-{uuid.uuid4().hex[:8]}"


class Drain:
    """``manage.py drain_audit`` beside the keyed server: its CPU from the first round until the
    spool is empty after the last, per row it wrote (a process of its own, as in the fleet)."""

    def __init__(self, env: dict[str, str], redis_url: str) -> None:
        self.env, self.redis = {**os.environ, **env}, redis_lib.Redis.from_url(redis_url)
        self.process: subprocess.Popen[str] | None = None
        self.cpu_at_start = 0.0

    def __enter__(self) -> Drain:
        self.process = subprocess.Popen([sys.executable, "manage.py", "drain_audit"], cwd=ROOT, env=self.env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return self

    def begin(self) -> None:
        """From its first round on: its start (Django's setup and checks, ~1.2 s of CPU, still
        under way when the servers are up) is not per row; counted, it made most of the figure."""
        alive, deadline = f"{{{SPOOL_PREFIX}}}:audit:drain", time.monotonic() + 30
        while not self.redis.exists(alive) and time.monotonic() < deadline:
            time.sleep(0.05)  # its first step sets the heartbeat
        self.cpu_at_start = cpu_seconds(self.process.pid if self.process else None)

    def finish(self) -> dict[str, float]:
        """Wait until the keyed server flushed and the drain wrote everything; its figures."""
        stream = f"{{{SPOOL_PREFIX}}}:audit:spool"
        deadline = time.monotonic() + 30
        time.sleep(1.0)  # the audit queue's tick (0.5 s) hands over the last entries
        while self.redis.xlen(stream) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert self.process is not None
        cpu = cpu_seconds(self.process.pid) - self.cpu_at_start
        self.process.send_signal(signal.SIGTERM)
        out, err = self.process.communicate(timeout=30)
        written = int(out.split("drained ")[1].split()[0]) if "drained " in out else 0
        if not written:
            raise RuntimeError(f"the audit drain wrote nothing:\n{out}\n{err[-2000:]}")
        return {"rows": written, "cpu_s": cpu, "us_per_row": cpu / written * 1e6}

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        keys = list(self.redis.scan_iter(f"*{SPOOL_PREFIX}*"))
        if keys:
            self.redis.delete(*keys)
        self.redis.close()
