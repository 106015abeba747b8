"""Issue 24 item 12: with ``DJANGO_DEBUG=0`` the development default ``SECRET_KEY`` (public: it is
in mcpsite/settings.py) refuses to start, with a message that says what to set, instead of
signing sessions, CSRF tokens and cursors with a key everyone knows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOAD_SETTINGS = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"


def load_settings(**env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DJANGO_DEBUG")}
    return subprocess.run([sys.executable, "-c", LOAD_SETTINGS], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={**base, "DJANGO_SETTINGS_MODULE": "mcpsite.settings", **env})


@pytest.mark.parametrize("secret", [None, "dev-insecure-mcpsite-secret-key-change-me"])
def test_debug_off_with_the_development_secret_key_does_not_start(secret: str | None) -> None:
    done = load_settings(DJANGO_DEBUG="0", **({"SECRET_KEY": secret} if secret else {}))
    assert done.returncode != 0
    assert "needs a SECRET_KEY of its own" in done.stderr  # mcpsite.environment.BadEnvironment


def test_debug_off_with_a_secret_key_of_its_own_starts() -> None:
    done = load_settings(DJANGO_DEBUG="0", SECRET_KEY="a-deployment-secret-" + "q" * 40)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_development_keeps_its_default_key() -> None:
    done = load_settings()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
