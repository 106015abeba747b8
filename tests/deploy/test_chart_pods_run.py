"""The chart's pods, run for real on this machine: what the rendered manifests say, executed.

The minimal value set is rendered with this machine's PostgreSQL (a database of its own, copied
from the test process's migrated template: a migrate from scratch is some 20 s here) and Redis (a
key prefix of its own) as its URLs; then, each with the environment its manifest gives it (the
image's ENV, the literal variables, the secrets resolved from the rendered Secret it names):

- the migrations Job's command runs against it (and finds nothing left to apply);
- the web container's command serves, and answers its startup, readiness and liveness probes as
  the kubelet sends them (path and Host header from the manifest), while a request by the pod's
  address is refused (the documented reason a scraper must send an allowed Host);
- SIGTERM stops it well within terminationGracePeriodSeconds;
- the audit drain's command drains (``--once``) and exits cleanly.
"""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpsite.fleet import stop_group
from tests.support.migrated import postgres_copy
from tests.support.polling import wait_until
from tests.support.ports import free_port
from tests.support.postgres import temporary_database
from tests.support.shared_redis import REDIS_URL, redis_prefix

from .chart import CHART, ROOT, pick, render

# docker/Dockerfile's ENV, which every container of the image starts with.
IMAGE_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
             "DJANGO_SETTINGS_MODULE": "mcpsite.settings", "DJANGO_DEBUG": "0"}


@pytest.fixture(scope="module")
def rendered() -> Iterator[dict[str, Any]]:
    with temporary_database("mcpsite_chart") as database, redis_prefix("mcpchart") as prefix:
        postgres_copy(database)
        values = {"database": {"url": database}, "redis": {"url": REDIS_URL, "keyPrefix": prefix}}
        report = render(CHART / "ci" / "minimal-values.yaml", inject=values, scan=False)
        yield report["sets"]["minimal-values"]


def secrets_of(entry: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {s["metadata"]["name"]: {k: base64.b64decode(v).decode() for k, v in s["data"].items()}
            for s in pick(entry, "Secret") + pick(entry, "Secret", "-migrate")}


def process_env(entry: dict[str, Any], container: dict[str, Any]) -> dict[str, str]:
    """The container's environment as the kubelet builds it, over this machine's PATH and HOME."""
    secrets = secrets_of(entry)
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), **IMAGE_ENV}
    for var in container["env"]:
        if "value" in var:
            env[var["name"]] = var["value"]
            continue
        ref = var["valueFrom"]["secretKeyRef"]
        value = secrets.get(ref["name"], {}).get(ref["key"])
        assert value is not None or ref.get("optional"), f"{var['name']}: {ref} is not in a rendered Secret"
        if value is not None:
            env[var["name"]] = value
    return env


def local(argv: list[str]) -> list[str]:
    """The image's argv on this machine: its python (and uvicorn) are the test's."""
    if argv[0] == "python":
        return [sys.executable, *argv[1:]]
    if argv[0] == "uvicorn":
        return [sys.executable, "-m", "uvicorn", *argv[1:]]
    raise AssertionError(f"unexpected command {argv}")


def run(entry: dict[str, Any], container: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
    argv = local(container["command"]) + list(extra)
    return subprocess.run(argv, cwd=ROOT, env=process_env(entry, container),
                          capture_output=True, text=True, timeout=120, check=False)


def test_migrate_serve_probe_stop_and_drain(rendered: dict[str, Any], tmp_path: Path) -> None:
    (job,) = pick(rendered, "Job", "-migrate")
    (migrate,) = job["spec"]["template"]["spec"]["containers"]
    done = run(rendered, migrate)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No migrations to apply" in done.stdout

    (web,) = pick(rendered, "Deployment")
    pod = web["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    port = free_port("127.0.0.1")
    # The manifest's uvicorn flags, bound to loopback on a free port instead of 0.0.0.0:8000.
    args = list(container["args"])
    args[args.index("--host") + 1] = "127.0.0.1"
    args[args.index("--port") + 1] = str(port)
    log = (tmp_path / "web.log").open("wb")
    env = process_env(rendered, container)
    process = subprocess.Popen(local(container["command"]) + args, cwd=ROOT, env=env,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"

        def probe(kind: str) -> httpx.Response:
            get = container[kind]["httpGet"]
            headers = {h["name"]: h["value"] for h in get["httpHeaders"]}
            return httpx.get(base + get["path"], headers=headers, timeout=container[kind]["timeoutSeconds"])

        def started() -> bool:
            try:
                return probe("startupProbe").status_code == 200
            except httpx.TransportError:
                assert process.poll() is None, (tmp_path / "web.log").read_text()
                return False

        startup = container["startupProbe"]
        wait_until("the startup probe", started, startup["periodSeconds"] * startup["failureThreshold"])
        ready = probe("readinessProbe")
        assert ready.status_code == 200, ready.text
        assert ready.json()["ready"] is True
        assert probe("livenessProbe").status_code == 200
        # A scraper or probe that sends the pod's address as Host is refused (Django's ALLOWED_HOSTS).
        by_address = httpx.get(base + "/healthz", headers={"Host": f"10.1.2.3:{port}"}, timeout=5)
        assert by_address.status_code == 400

        began = time.monotonic()
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(pod["terminationGracePeriodSeconds"])
        assert time.monotonic() - began < pod["terminationGracePeriodSeconds"]
    finally:
        stop_group(process)
        log.close()

    (drain,) = pick(rendered, "Deployment", "-audit-drain")
    (container,) = drain["spec"]["template"]["spec"]["containers"]
    done = run(rendered, container, "--once")
    assert done.returncode == 0, done.stdout + done.stderr
