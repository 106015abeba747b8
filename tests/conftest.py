"""Settings for the tests that run in this process (pytest-django), not for the servers they start.

Password hashing: the product keeps Django's PBKDF2 (1,000,000 iterations: about half a second of
CPU per hash on the 2-core CI machine). In-process tests make a user per test (the ``superuser``
and ``staff_with`` fixtures of tests/unit/api and tests/security, the route walk's staff), and
hashing was minutes of the suite's CPU. Django's testing guide ("Speeding up the tests",
"Password hashing") recommends a fast hasher here. Django's own list follows it, so a stored
PBKDF2 hash still checks and an older hasher's is still upgraded (tests/unit/oauth_server/
test_user_grants.py). Server processes (tests/support/live_server.py) keep the product's hashers.
"""

from __future__ import annotations

import uuid

import pytest
from django.conf import global_settings

FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *global_settings.PASSWORD_HASHERS]


def pytest_configure(config: pytest.Config) -> None:
    from django.conf import settings
    from django.contrib.auth.hashers import get_hashers, get_hashers_by_algorithm

    settings.PASSWORD_HASHERS = FAST_HASHERS
    get_hashers.cache_clear()  # nothing hashed yet; cleared so no earlier import can pin the old list
    get_hashers_by_algorithm.cache_clear()
    # (xdist controller) The run's uid fixed before the workers start (xdist makes one otherwise,
    # at session start), so the controller knows the PYTEST_XDIST_TESTRUNUID its workers key their
    # shared migrated templates on (tests/support/migrated.py) and removes them at the end.
    if not hasattr(config, "workerinput") and config.pluginmanager.hasplugin("xdist"):
        if config.getoption("testrunuid", None) is None:
            config.option.testrunuid = uuid.uuid4().hex


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """(xdist controller) The workers are done: remove the run's shared migrated templates."""
    config = session.config
    run = None if hasattr(config, "workerinput") else config.getoption("testrunuid", None)
    if run:
        from tests.support.migrated import remove_run

        remove_run(run)
