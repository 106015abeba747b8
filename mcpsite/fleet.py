"""A fleet on one machine: N uvicorn workers on loopback and nginx in front (``scripts/fleet.sh``).

    python -m mcpsite.fleet --workers 3 [--port 8080] [--dir /tmp/my-fleet]

What it runs is what compose runs: the workers share the database (``DATABASE_URL``) and Redis
(``REDIS_URL``; default the local 127.0.0.1:6379 with a key prefix of the fleet's own), and nginx
balances them round robin with no affinity, through the routes of ``docker/nginx/mcp-proxy.conf``
(SSE-friendly: no buffering, long reads, HTTP/1.1 keep-alive upstream). Every file (nginx's
config, pid, temp files and logs, the workers' logs, the metrics directory) lives under one
temporary prefix, so neither root nor free system ports are needed; every port is a free one
unless given. ``PROMETHEUS_MULTIPROC_DIR`` is set for the workers, so ``/metrics`` through the
balancer reports the whole fleet.

``Balancer`` is the nginx part alone, for tests that start their own workers
(``tests/integration/test_multiworker_balanced.py``).
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
PROXY_CONF = ROOT / "docker" / "nginx" / "mcp-proxy.conf"
START_TIMEOUT = 30.0


# Ports chosen below the kernel's ephemeral range: one the kernel hands out (``bind(0)``) is also
# what it gives the next outgoing connection as its local port, so between our pick and the
# server's bind a client socket may take it (CI saw a private Redis fail "Address already in
# use" that way). Below the range only our own picks compete, and at random over some 12,000.
_LOWEST = 20000
_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _first_ephemeral() -> int | None:
    try:
        return int(_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now, outside the range the kernel gives outgoing connections
    when that range is known (Linux), else one the kernel picks."""
    first = _first_ephemeral()
    if first is not None and first - _LOWEST >= 1000:
        chooser = random.SystemRandom()
        for _ in range(200):
            port = chooser.randrange(_LOWEST, first)
            with socket.socket() as sock:
                try:  # no SO_REUSEADDR: a port with a socket in TIME_WAIT is passed over too
                    sock.bind((host, port))
                except OSError:
                    continue
                return port
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def nginx_config(upstreams: Sequence[str], port: int, prefix: Path, host: str = "127.0.0.1") -> str:
    """nginx.conf for a balancer on ``host:port`` in front of ``upstreams`` (``host:port`` each)."""
    servers = "\n".join(f"    server {u};" for u in upstreams)
    kinds = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    temp = "\n".join(f"  {kind}_temp_path {prefix / 'tmp' / kind};" for kind in kinds)
    return f"""# Written by mcpsite/fleet.py; the routes are docker/nginx/mcp-proxy.conf (as in compose).
worker_processes 1;
daemon off;
pid {prefix / "nginx.pid"};
error_log {prefix / "nginx-error.log"} warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
{temp}
  upstream mcp_workers {{
{servers}
    keepalive 32;
  }}
  server {{
    listen {host}:{port};
    include {PROXY_CONF};
  }}
}}
"""


def _wait_http(url: str, process: subprocess.Popen[bytes], log: Path, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}:\n{_tail(log)}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)  # a port coming up has nothing to wait on
    raise RuntimeError(f"{what} did not answer {url} within {START_TIMEOUT} s:\n{_tail(log)}")


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def stop_group(process: subprocess.Popen[bytes] | None, timeout: float = 10.0) -> None:
    """SIGTERM the process's group (started with ``start_new_session``), SIGKILL after ``timeout``."""
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout)
    except ProcessLookupError:
        pass


def nginx_binary() -> str:
    found = shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None
    )
    if found is None:
        raise RuntimeError("nginx is not installed (scripts/fleet.sh installs Debian's nginx as root)")
    return found


class Balancer:
    """nginx on a free loopback port in front of ``upstreams``, under a prefix of its own."""

    def __init__(
        self,
        upstreams: Sequence[str],
        *,
        port: int | None = None,
        prefix: Path | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.upstreams = list(upstreams)
        self.host = host
        self.port = port or free_port(host)
        self._own_prefix = prefix is None
        self.prefix = prefix or Path(tempfile.mkdtemp(prefix="mcpsite-nginx-"))
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base_url}/mcp"

    def start(self) -> Balancer:
        (self.prefix / "tmp").mkdir(parents=True, exist_ok=True)
        # nginx started as root runs its workers as nobody: they must reach the temp directories.
        self.prefix.chmod(0o755)
        conf = self.prefix / "nginx.conf"
        conf.write_text(nginx_config(self.upstreams, self.port, self.prefix, self.host))
        log = self.prefix / "nginx-error.log"
        # -e: nginx opens its error log before reading the config; the default is under /var/log.
        argv = [nginx_binary(), "-p", str(self.prefix), "-c", str(conf), "-e", str(log)]
        self.process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            _wait_http(f"{self.base_url}/healthz", self.process, log, "nginx")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        stop_group(self.process)
        self.process = None
        if self._own_prefix:
            shutil.rmtree(self.prefix, ignore_errors=True)

    def __enter__(self) -> Balancer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# The HTTPS settings that DJANGO_DEBUG=0 turns on (mcpsite/settings.py), off: for a fleet or a test
# server that serves plain HTTP on loopback, where a redirect to https or a Secure cookie has no
# TLS to go to. Never for a deployment.
PLAIN_HTTP = {
    "DJANGO_SECURE_SSL_REDIRECT": "0",
    "DJANGO_SECURE_HSTS_SECONDS": "0",
    "DJANGO_SESSION_COOKIE_SECURE": "0",
    "DJANGO_CSRF_COOKIE_SECURE": "0",
}


class Fleet:
    """``workers`` uvicorn processes and a ``Balancer``, under ``prefix``: plain HTTP on loopback
    (``PLAIN_HTTP`` unless ``env`` or the environment says otherwise)."""

    def __init__(
        self,
        workers: int,
        *,
        port: int | None = None,
        prefix: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.prefix = prefix or Path(tempfile.mkdtemp(prefix="mcpsite-fleet-"))
        self.metrics_dir = self.prefix / "metrics"
        self.env = {
            **PLAIN_HTTP,
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "mcpsite.settings",
            "REDIS_URL": os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0",
            "MCP_KEY_PREFIX": os.environ.get("MCP_KEY_PREFIX") or f"fleet-{uuid.uuid4().hex[:8]}",
            **(env or {}),
            "PROMETHEUS_MULTIPROC_DIR": str(self.metrics_dir),
        }
        self.ports = [free_port() for _ in range(workers)]
        self.workers: list[subprocess.Popen[bytes]] = []
        self.drain: subprocess.Popen[bytes] | None = None
        self.balancer = Balancer([f"127.0.0.1:{p}" for p in self.ports], port=port, prefix=self.prefix)

    @property
    def command_env(self) -> dict[str, str]:
        """The fleet's environment for management commands (migrate, the audit drain): without the
        workers' metrics directory, so a scrape sums the workers only (a command imports the
        metrics too, and its files would be summed in)."""
        return {k: v for k, v in self.env.items() if k != "PROMETHEUS_MULTIPROC_DIR"}

    def manage(self, *argv: str) -> None:
        argv_full = [sys.executable, str(ROOT / "manage.py"), *argv]
        subprocess.run(argv_full, cwd=ROOT, env=self.command_env, check=True, timeout=300)

    def start_worker(self, port: int) -> subprocess.Popen[bytes]:
        log = self.prefix / f"worker-{port}.log"
        argv = [
            sys.executable,
            "-m",
            "uvicorn",
            "mcpsite.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
            "--proxy-headers",
            "--forwarded-allow-ips",
            "127.0.0.1",
        ]
        with log.open("ab") as out:
            process = subprocess.Popen(
                argv, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        _wait_http(f"http://127.0.0.1:{port}/healthz", process, log, f"worker on {port}")
        return process

    def start_drain(self) -> subprocess.Popen[bytes] | None:
        """The audit spool's drain (``manage.py drain_audit``), unless the audit log is off or
        written by the workers themselves (``MCP_AUDIT=0``, ``MCP_AUDIT_SINK=database``)."""
        if (
            self.env.get("MCP_AUDIT", "1") in ("0", "false", "no", "off")
            or self.env.get("MCP_AUDIT_SINK", "redis") != "redis"
        ):
            return None
        with (self.prefix / "drain.log").open("ab") as out:
            return subprocess.Popen(
                [sys.executable, str(ROOT / "manage.py"), "drain_audit"],
                cwd=ROOT,
                env=self.command_env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def start(self, *, prepare: bool = True) -> Fleet:
        # A fresh directory: files of dead processes from an earlier run would be summed in.
        shutil.rmtree(self.metrics_dir, ignore_errors=True)
        self.metrics_dir.mkdir(parents=True)
        try:
            if prepare:
                self.manage("migrate", "--noinput", "--verbosity", "0")
                if self.env.get("DJANGO_DEBUG", "1") in ("0", "false", "no", "off"):
                    self.manage("collectstatic", "--noinput", "--verbosity", "0")
            self.workers = [self.start_worker(p) for p in self.ports]
            self.drain = self.start_drain()
            self.balancer.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        self.balancer.stop()
        for process in self.workers:
            stop_group(process)
        self.workers = []
        stop_group(self.drain)
        self.drain = None


SHELL_VARIABLES = ("DJANGO_SETTINGS_MODULE", "REDIS_URL", "MCP_KEY_PREFIX", "MCP_REDIS_MODE")


def shell_environment(env: dict[str, str], inherited: Mapping[str, str] | None = None) -> list[str]:
    """``export`` lines for what a shell in this checkout needs to reach the fleet: the variables the
    fleet chose itself (the random ``MCP_KEY_PREFIX``, the default ``REDIS_URL``). Those it took
    from the operator's environment are theirs already and are not printed (a URL may hold a
    password); the database is the operator's ``DATABASE_URL`` or this checkout's SQLite file."""
    inherited = os.environ if inherited is None else inherited
    return [
        f"export {name}={shlex.quote(env[name])}"
        for name in SHELL_VARIABLES
        if env.get(name) and inherited.get(name) != env[name]
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="N uvicorn workers behind nginx, on loopback.")
    parser.add_argument("--workers", type=int, default=int(os.environ.get("MCP_FLEET_WORKERS", "3")))
    parser.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("MCP_FLEET_PORT", "0")) or None,
        help="the balancer's port (default: a free one)",
    )
    parser.add_argument("--dir", type=Path, help="the prefix for every file (default: a new temp dir)")
    args = parser.parse_args(argv)
    fleet = Fleet(args.workers, port=args.port, prefix=args.dir)
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    fleet.start()
    base = fleet.balancer.base_url
    print(f"MCP endpoint:  {base}/mcp   (nginx, round robin over {args.workers} workers)", flush=True)
    print(f"Admin:         {base}/admin/", flush=True)
    print(f"Metrics:       {base}/metrics   Ready: {base}/readyz", flush=True)
    print(f"Workers:       {', '.join(f'127.0.0.1:{p}' for p in fleet.ports)}", flush=True)
    print(f"Files, logs:   {fleet.prefix}", flush=True)
    # Another terminal's manage.py (load_conformance, shell, import_registry) must publish where the
    # workers listen: the same Redis, key prefix and database.
    print("Environment for a shell beside the fleet:", flush=True)
    for line in shell_environment(fleet.env):
        print(f"  {line}", flush=True)
    try:
        while not stopping:
            if any(p.poll() is not None for p in [*fleet.workers, fleet.drain, fleet.balancer.process] if p):
                print("a fleet process exited; stopping (logs in the prefix above)", file=sys.stderr)
                return 1
            time.sleep(0.5)
    finally:
        fleet.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
