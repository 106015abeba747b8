#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
    from django.core.management import execute_from_command_line

    from mcpsite.environment import one_line_errors

    with one_line_errors():  # a bad environment variable: one line naming it, exit 2
        execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
