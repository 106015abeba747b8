"""Fixtures of the fault suite: a fleet of real workers on a private Redis, per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fleets import Fleet, running_fleet


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    with running_fleet(tmp_path) as fleet:
        yield fleet
