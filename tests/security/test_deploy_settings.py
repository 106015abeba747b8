"""Issue 24 item 11 (deployment hardening): the production settings, as docker/compose.yaml and the
image set them, pass ``manage.py check --deploy --fail-level WARNING`` (HSTS, SSL redirect, Secure
cookies, each configurable); the image believes X-Forwarded-For only from the balancer, not from
``*``, so a client that reaches a worker cannot choose the address it is seen (and throttled) as.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
from pathlib import Path

import httpx

from mcpsite.fleet import PLAIN_HTTP
from tests.support.live_server import LiveServer
from tests.unit.ops.test_deploy_files import compose

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "docker" / "Dockerfile").read_text()
# What an operator puts in docker/.env: the one variable compose requires.
OPERATOR = {"SECRET_KEY": secrets.token_urlsafe(50)}


def interpolate(value: str, given: dict[str, str]) -> str:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?message}``, from ``given``."""
    def one(found: re.Match[str]) -> str:
        name, how, rest = found.group(1), found.group(2) or "", found.group(3) or ""
        if given.get(name):
            return given[name]
        if how == ":?":
            raise AssertionError(f"compose requires {name}: {rest}")
        return rest if how == ":-" else ""
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-|:\?)?([^}]*)\}", one, str(value))


def image_env() -> dict[str, str]:
    """The Dockerfile's ENV (KEY=VALUE words, continued lines joined)."""
    text = DOCKERFILE.replace("\\\n", " ")
    env: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            env.update(word.split("=", 1) for word in shlex.split(line[4:]) if "=" in word)
    return env


def worker_env() -> dict[str, str]:
    declared = compose()["services"]["worker1"]["environment"]
    return {**image_env(), **{k: interpolate(v, OPERATOR) for k, v in declared.items()}}


def image_cmd() -> list[str]:
    found = re.search(r"^CMD (\[.*?\])\s*$", DOCKERFILE.replace("\\\n", " "), re.MULTILINE)
    assert found is not None
    argv: list[str] = json.loads(found.group(1))
    return argv


def clean_environment() -> dict[str, str]:
    """This process's environment without anything that configures the project."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("DJANGO_", "MCP_", "REGISTRY_", "API_THROTTLE_"))
            and k not in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL", "FORWARDED_ALLOW_IPS")}


def test_the_compose_environment_passes_check_deploy() -> None:
    env = {**clean_environment(), **worker_env()}
    assert env["DJANGO_DEBUG"] == "0"
    done = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_debug_off_defaults_to_https_and_each_setting_can_be_turned_off() -> None:
    probe = ("import django; django.setup(); from django.conf import settings as s; "
             "print(s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.SESSION_COOKIE_SECURE, "
             "s.CSRF_COOKIE_SECURE, getattr(s, 'SECURE_PROXY_SSL_HEADER', None))")
    base = {**clean_environment(), "DJANGO_SETTINGS_MODULE": "mcpsite.settings", "DJANGO_DEBUG": "0",
            **OPERATOR}

    def settings_with(**env: str) -> str:
        done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env={**base, **env},
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert settings_with() == "True 31536000 True True None"
    assert settings_with(**PLAIN_HTTP) == "False 0 False False None"
    assert settings_with(DJANGO_SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto").endswith(
        "('HTTP_X_FORWARDED_PROTO', 'https')")


def test_the_image_trusts_forwarded_headers_only_from_the_balancer() -> None:
    argv = image_cmd()
    assert "--proxy-headers" in argv
    assert "*" not in argv and "--forwarded-allow-ips" not in argv  # FORWARDED_ALLOW_IPS decides
    assert image_env()["FORWARDED_ALLOW_IPS"] == "127.0.0.1"  # the image alone: nobody else
    services = compose()["services"]
    balancer = interpolate(services["lb"]["networks"]["default"]["ipv4_address"], OPERATOR)
    for name in ("worker1", "worker2", "worker3", "audit-drain"):
        assert interpolate(services[name]["environment"]["FORWARDED_ALLOW_IPS"], OPERATOR) == balancer
    assert "*" not in balancer


def seen_as(trusted: str, forwarded_for: str) -> str:
    """The client address a worker started with the image's command (and ``trusted`` as its
    FORWARDED_ALLOW_IPS) logs for a request from this test (127.0.0.1) that says it forwards
    ``forwarded_for``."""
    options = image_cmd()[image_cmd().index("mcpsite.asgi:application") + 1:]
    kept: list[str] = []
    skip = False
    for word in options:  # the test server's own host, port and log options stand
        if skip:
            skip = False
        elif word in ("--host", "--port"):
            skip = True
        elif word != "--no-access-log":
            kept.append(word)
    server = LiveServer(env={"FORWARDED_ALLOW_IPS": trusted}, probe_path="/healthz",
                        extra_args=[*kept, "--access-log", "--log-level", "info"])
    server.start()
    try:
        answer = httpx.get(f"{server.base_url}/healthz", headers={"X-Forwarded-For": forwarded_for},
                           timeout=10)
        assert answer.status_code == 200
        server.stop(keep_log=True)
        lines = [line for line in server.last_log.splitlines() if "/healthz" in line]
        found = re.findall(r"([0-9.]+):\d+ - \"GET /healthz", "\n".join(lines))
        assert found, server.last_log
        return found[-1]
    finally:
        server.stop()


def test_a_client_that_is_not_the_balancer_cannot_choose_its_address() -> None:
    balancer = interpolate(compose()["services"]["lb"]["networks"]["default"]["ipv4_address"], OPERATOR)
    assert seen_as(balancer, "203.0.113.77") == "127.0.0.1"


def test_the_balancer_still_forwards_the_clients_address() -> None:
    assert seen_as("127.0.0.1", "203.0.113.77") == "203.0.113.77"


def test_the_api_throttles_the_address_the_server_saw_not_the_header() -> None:
    from django.test import RequestFactory
    from rest_framework.request import Request
    from rest_framework.throttling import AnonRateThrottle

    request = RequestFactory().get("/api/v1/tools/", HTTP_X_FORWARDED_FOR="198.51.100.1, 10.0.0.1",
                                   REMOTE_ADDR="192.0.2.10")
    assert AnonRateThrottle().get_ident(Request(request)) == "192.0.2.10"
