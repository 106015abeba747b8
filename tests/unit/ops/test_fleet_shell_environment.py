"""``mcpsite.fleet`` prints what another terminal needs to reach the fleet: the variables it chose
itself, never those it took from the operator's environment (a URL may hold a password)."""

from __future__ import annotations

from mcpsite.fleet import shell_environment


def test_the_fleets_own_choices_are_printed_as_export_lines() -> None:
    env = {
        "DJANGO_SETTINGS_MODULE": "mcpsite.settings",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "MCP_KEY_PREFIX": "fleet-1a2b3c4d",
        "SECRET_KEY": "never printed",
    }
    assert shell_environment(env, inherited={}) == [
        "export DJANGO_SETTINGS_MODULE=mcpsite.settings",
        "export REDIS_URL=redis://127.0.0.1:6379/0",
        "export MCP_KEY_PREFIX=fleet-1a2b3c4d",
    ]


def test_variables_the_operator_set_are_left_out() -> None:
    env = {"REDIS_URL": "redis://:secret@cache:6379/0", "MCP_KEY_PREFIX": "fleet-x"}
    assert shell_environment(env, inherited={"REDIS_URL": "redis://:secret@cache:6379/0"}) == [
        "export MCP_KEY_PREFIX=fleet-x"
    ]
