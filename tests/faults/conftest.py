"""Fixtures of the fault suite: a fleet of real workers on a private Redis, per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.private_redis import have_redis_server

from .fleet import Fleet


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    if not have_redis_server():
        pytest.skip("needs redis-server and redis-cli")
    started = Fleet(tmp_path)
    try:
        yield started
    finally:
        started.stop()
