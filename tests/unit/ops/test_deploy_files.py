"""The compose file and the image, checked without a Docker engine (none runs here).

``docker compose config`` is the real check and runs when the compose plugin is installed;
without it (as on this machine: ``docker: unknown command: docker compose``) the file is
validated against the Compose Specification's JSON schema as vendored by ``check-jsonschema``
(pinned), and the wiring the schema cannot see is checked here: start order, mounts, the shared
nginx routes, and the Dockerfile's production settings.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from mcpsite.fleet import PROXY_CONF, nginx_config

ROOT = Path(__file__).resolve().parents[3]
DOCKER = ROOT / "docker"
COMPOSE = DOCKER / "compose.yaml"


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = YAML(typ="safe").load(COMPOSE.read_text())  # resolves the << merges
    return loaded


def have_compose_plugin() -> bool:
    if shutil.which("docker") is None:
        return False
    probe = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
    return probe.returncode == 0


def test_the_compose_file_is_valid_against_the_compose_spec_schema() -> None:
    checker = Path(sys.executable).parent / "check-jsonschema"
    done = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.compose-spec", str(COMPOSE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(not have_compose_plugin(), reason="no docker compose plugin: schema-validated instead")
def test_docker_compose_config_accepts_it_and_requires_a_secret_key() -> None:
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    argv = ["docker", "compose", "-f", str(COMPOSE), "config", "--quiet"]
    refused = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "SECRET_KEY" in refused.stderr
    env["SECRET_KEY"] = "x" * 50
    accepted = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert accepted.returncode == 0, accepted.stderr


def test_migrations_run_once_before_the_workers_and_the_balancer_waits_for_healthy_workers() -> None:
    services = compose()["services"]
    assert set(services) == {
        "postgres",
        "redis",
        "migrate",
        "worker1",
        "worker2",
        "worker3",
        "audit-drain",
        "lb",
    }
    assert services["migrate"]["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
    }
    assert services["migrate"]["restart"] == "no"
    command = " ".join(services["migrate"]["command"])
    assert "migrate --noinput" in command and "ensure_admin" in command
    for name in ("worker1", "worker2", "worker3"):
        worker = services[name]
        assert worker["depends_on"] == {"migrate": {"condition": "service_completed_successfully"}}
        assert "command" not in worker  # the image's CMD: uvicorn --proxy-headers
        env = worker["environment"]
        assert env["REDIS_URL"].startswith("redis://redis:") and env["DATABASE_URL"].startswith("postgres://")
        assert env["SECRET_KEY"].startswith("${SECRET_KEY:?")  # no default secret
        assert env["DJANGO_DEBUG"] == "0"
    drain = services["audit-drain"]  # the audit spool's writer, on the workers' settings
    assert drain["command"] == ["python", "manage.py", "drain_audit"]
    assert drain["environment"] == services["worker1"]["environment"]
    assert drain["depends_on"] == {"migrate": {"condition": "service_completed_successfully"}}
    assert services["lb"]["depends_on"] == {f"worker{n}": {"condition": "service_healthy"} for n in (1, 2, 3)}
    assert services["lb"]["ports"] == ["127.0.0.1:8080:8080"]  # loopback unless the operator says so


def test_the_admin_creation_is_optional_and_from_the_environment() -> None:
    env = compose()["services"]["migrate"]["environment"]
    assert env["DJANGO_SUPERUSER_USERNAME"] == "${DJANGO_SUPERUSER_USERNAME:-}"
    assert env["DJANGO_SUPERUSER_PASSWORD"] == "${DJANGO_SUPERUSER_PASSWORD:-}"


def test_the_balancer_mounts_files_that_exist_and_uses_the_fleets_routes() -> None:
    for mount in compose()["services"]["lb"]["volumes"]:
        source, _target, _mode = mount.split(":")
        assert (DOCKER / source).resolve().is_file(), source
    nginx = (DOCKER / "nginx" / "nginx.conf").read_text()
    assert "include /etc/nginx/mcp-proxy.conf;" in nginx
    assert f"include {PROXY_CONF};" in nginx_config(["127.0.0.1:1"], 2, Path("/tmp/x"))
    routes = PROXY_CONF.read_text()
    for directive in (
        "proxy_buffering off;",
        "proxy_read_timeout 3600s;",
        "proxy_http_version 1.1;",
        'proxy_set_header Connection "";',
    ):
        assert directive in routes
    assert "ip_hash" not in nginx + routes and "sticky" not in nginx + routes  # no affinity
    assert "keepalive" in nginx


def test_the_image_is_non_root_collects_static_files_and_checks_health() -> None:
    dockerfile = (DOCKER / "Dockerfile").read_text()
    assert "\nUSER mcp\n" in dockerfile
    assert "collectstatic --noinput" in dockerfile
    assert "HEALTHCHECK" in dockerfile and "docker/healthcheck.py" in dockerfile
    assert '"--proxy-headers"' in dockerfile
    for line in dockerfile.splitlines():
        if line.startswith("COPY "):
            source = line.split()[1]
            assert (ROOT / source).exists(), f"COPY {source}: missing from the repository"
    # Every package the wheel is built from (pyproject's packages.find) is in the image.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = [p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]]
    assert [p for p in packages if f"\nCOPY {p} {p}\n" not in dockerfile] == []


def test_the_healthcheck_script_sends_an_allowed_host(tmp_path: Path) -> None:
    # Run against nothing listening: it must fail cleanly (exit 1), not crash.
    env = {**os.environ, "DJANGO_ALLOWED_HOSTS": ".example.com,worker1"}
    done = subprocess.run(
        [sys.executable, str(DOCKER / "healthcheck.py")], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1 and done.stderr.startswith("healthz:")
