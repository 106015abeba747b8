"""Every option and argument of every management command of ours has help: ``manage.py <command>
--help`` explains each one, sub-commands (``mcp_keys create``) included. Walks the parsers Django
builds, so a new command or option without help fails here."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest
from django.core.management import get_commands, load_command_class

OUR_APPS = ("access", "management_api", "mcp_django", "oauth_server", "registry", "mcpsite")
OURS = sorted((name, app) for name, app in get_commands().items() if app.split(".")[0] in OUR_APPS)


def walk(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                yield f"{path} {choice.dest}", choice
            for name, sub in action.choices.items():
                yield from walk(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield f"{path} {'/'.join(action.option_strings) or action.dest}", action


def test_our_commands_are_found() -> None:
    names = {name for name, _ in OURS}
    assert {"mcp_keys", "management_tokens", "create_management_token", "load_demo", "mcp_stdio"} <= names


@pytest.mark.parametrize(("name", "app"), OURS, ids=[name for name, _ in OURS])
def test_every_option_of_the_command_has_help(name: str, app: str) -> None:
    command = load_command_class(app, name)
    assert (command.help or "").strip(), f"{name} has no help of its own"
    parser = command.create_parser("manage.py", name)
    missing = [
        where
        for where, action in walk(parser, name)
        if action.help is not argparse.SUPPRESS and not (action.help or "").strip()
    ]
    assert not missing, f"no help: {missing}"
