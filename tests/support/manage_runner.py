"""The other end of ``manage.ManageSession``: one Django process that runs management commands one
after another, as ``manage.py`` would run each (``execute_from_command_line``, so ``shell -c``,
``CommandError`` exits and argument errors behave the same), without a Django start-up for each.

    python tests/support/manage_runner.py      # cwd: the project; its environment: the settings

It reads one JSON list of arguments a line on stdin and answers each with one JSON line
``{"code": exit code, "stdout": ..., "stderr": ...}`` on the descriptor stdout had when it
started (file descriptor 1 itself goes to stderr, so nothing a command prints can break a
reply). After every command it closes its database connections: the next one, like a fresh
process, reads what the servers wrote meanwhile, and SQLite is left unlocked between commands.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback


def main() -> None:
    sys.path[0] = os.getcwd()  # the project, as for manage.py (not this script's folder)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    import django
    from django.core.management import execute_from_command_line
    from django.db import connections

    django.setup()
    for line in sys.stdin:
        argv = json.loads(line)
        out, err = io.StringIO(), io.StringIO()
        code = 0
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                execute_from_command_line(["manage.py", *argv])
        except SystemExit as stop:  # CommandError, a bad argument: what manage.py would exit with
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if stop.code is not None and not isinstance(stop.code, int):
                err.write(str(stop.code))
        except BaseException:
            code = 1
            err.write(traceback.format_exc())
        finally:
            connections.close_all()
        replies.write(json.dumps({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
