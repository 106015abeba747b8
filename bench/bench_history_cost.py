"""What the registry's history costs (issue 28): a save with history on ÷ off, an import of 1,000
tools, and ``/mcp`` tools/call (which must not change: no history on the hot path).

    .venv/bin/python bench/bench_history_cost.py [--saves 200] [--rounds 7] [--import-size 1000]
        [--database postgresql|sqlite]

One process, the project's settings on a fresh database (PostgreSQL on 127.0.0.1:5432, or a SQLite
file in a temporary folder; dropped after),
the registry provider, memory stores and bus, audit and metrics off. History is turned off with
django-simple-history's own ``SIMPLE_HISTORY_ENABLED`` setting; the change set row (which the
reconciler needs: issue 28 item 5) is written either way. In every round both variants run back
to back in a new order:

- a tool saved as the admin saves it (one transaction, the admin as author), and a prompt saved
  with its two arguments and one message; the median per save (wall time, this process's CPU
  time, SQL statements), and on ÷ off;
- an import (``registry.transfer.documents.import_document``) creating ``--import-size`` tools, then one
  updating all of them;
- ``tools/call`` of a registry tool through the ASGI app in-process (CPU per call), and the SQL
  queries run during those calls, counted on every connection of the process (expected: none).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"
VARIANTS = ("off", "on")


@contextmanager
def database(engine: str) -> Iterator[str]:
    if engine == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{folder}/bench.sqlite3"
        return
    import psycopg

    name = f"bench_history_cost_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgres://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def history(variant: str) -> Any:
    from django.test import override_settings

    return override_settings(SIMPLE_HISTORY_ENABLED=variant == "on")


class QueryCounter:
    """Every SQL statement of every connection this process opens (threads included)."""

    def __init__(self) -> None:
        from django.db.backends.signals import connection_created

        self.count = 0
        connection_created.connect(self._wrap, weak=False)

    def _wrap(self, sender: Any, connection: Any, **kwargs: Any) -> None:
        connection.execute_wrappers.append(self._counted)

    def _counted(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        self.count += 1
        return execute(sql, params, many, context)


def time_saves(tools: list[Any], prompts: list[Any], counter: QueryCounter) -> dict[str, float]:
    """Per save: wall time, this process's CPU time and SQL statements (BEGIN and COMMIT are not
    statements here), of a tool, and of a prompt with its children."""
    from django.contrib.auth.models import User
    from django.db import transaction

    from registry.changes.authorship import authored, of_user

    admin = User.objects.get(username="bench")
    out: dict[str, float] = {}
    statements, started, cpu = counter.count, time.perf_counter(), time.process_time()
    for n, tool in enumerate(tools):
        with authored(of_user(admin, "admin")), transaction.atomic():
            tool.description = f"edit {n} {time.time()}"
            tool.save()
    out["tool"] = (time.perf_counter() - started) / len(tools)
    out["tool cpu"] = (time.process_time() - cpu) / len(tools)
    out["tool statements"] = (counter.count - statements) / len(tools)
    statements, started, cpu = counter.count, time.perf_counter(), time.process_time()
    for n, prompt in enumerate(prompts):
        with authored(of_user(admin, "admin")), transaction.atomic():
            prompt.description = f"edit {n} {time.time()}"
            prompt.save()
            for child in (*prompt.arguments.all(), *prompt.messages.all()):
                child.save()
    out["prompt"] = (time.perf_counter() - started) / len(prompts)
    out["prompt cpu"] = (time.process_time() - cpu) / len(prompts)
    out["prompt statements"] = (counter.count - statements) / len(prompts)
    return out


def time_import(size: int, tag: str) -> tuple[float, float]:
    from registry.transfer.documents import import_document

    def document(description: str) -> dict[str, Any]:
        schema = {"type": "object", "properties": {"who": {"type": "string"}}}
        return {
            "tools": [
                {
                    "name": f"imp_{tag}_{i}",
                    "kind": "template",
                    "template_text": "Hi {{ who }}",
                    "description": description,
                    "input_schema": schema,
                }
                for i in range(size)
            ]
        }

    started = time.perf_counter()
    assert not import_document(document("created")).errors
    created = time.perf_counter() - started
    started = time.perf_counter()
    assert not import_document(document("updated")).errors
    return created, time.perf_counter() - started


async def time_calls(calls: int, counter: QueryCounter | None = None) -> tuple[float, int]:
    """CPU per call, and the SQL queries run during the timed calls (setup excluded)."""
    from harness.inprocess import CALL, INITIALIZE, request

    from mcp_django.service import get_service
    from mcp_protocol.transports.http import MCPEndpoint

    app = MCPEndpoint(get_service())
    started = await request(app, json.dumps(INITIALIZE).encode())
    session = dict(started[0]["headers"])[b"mcp-session-id"]
    await request(app, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', session)
    body = json.dumps(CALL).encode()
    answer = await request(app, body, session)
    assert b'"text":"hi"' in b"".join(m.get("body", b"") for m in answer), answer
    before = counter.count if counter is not None else 0
    start = time.process_time()
    for _ in range(calls):
        await request(app, body, session)
    spent = (time.process_time() - start) / calls
    return spent, (counter.count if counter is not None else 0) - before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--import-size", type=int, default=1000)
    parser.add_argument("--import-rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--database", choices=("postgresql", "sqlite"), default="postgresql")
    args = parser.parse_args()
    with database(args.database) as url:
        os.environ.update(
            {
                "DJANGO_SETTINGS_MODULE": "mcpsite.settings",
                "DATABASE_URL": url,
                "REDIS_URL": "",
                "MCP_PROVIDER": "registry.provider.RegistryProvider",
                "MCP_AUDIT": "0",
                "MCP_METRICS": "0",
                "MCP_LOG_LEVEL": "WARNING",
                "REGISTRY_RECONCILE_SECONDS": "0",
            }
        )
        import django

        django.setup()
        counter = QueryCounter()
        from django.contrib.auth.models import User
        from django.core.management import call_command

        from registry.models import Prompt, Tool

        call_command("migrate", verbosity=0)
        call_command("load_demo", verbosity=0)
        User.objects.create_superuser("bench", "bench@example.com", uuid.uuid4().hex)
        rows: dict[str, tuple[list[Any], list[Any]]] = {}
        for variant in VARIANTS:
            tools = [
                Tool.objects.create(name=f"{variant}_{i}", kind="template", template_text="x")
                for i in range(args.saves)
            ]
            prompts = []
            for i in range(args.saves):
                prompt = Prompt.objects.create(name=f"{variant}_p{i}", description="d")
                prompt.arguments.create(name="a", position=0)
                prompt.arguments.create(name="b", position=1)
                prompt.messages.create(role="user", content={"type": "text", "text": "{{ a }}"})
                prompts.append(prompt)
            rows[variant] = (tools, prompts)
        saves: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for variant in random.sample(VARIANTS, 2):
                with history(variant):
                    measured = time_saves(*rows[variant], counter)
                for what, value in measured.items():
                    saves.setdefault((variant, what), []).append(value)
        imports: dict[tuple[str, str], list[float]] = {}
        for n in range(args.import_rounds):
            for variant in random.sample(VARIANTS, 2):
                with history(variant):
                    created, updated = time_import(args.import_size, f"{variant}{n}")
                imports.setdefault((variant, "create"), []).append(created)
                imports.setdefault((variant, "update"), []).append(updated)
        calls: dict[str, list[float]] = {}
        queries: dict[str, int] = {}
        for _ in range(3):
            for variant in random.sample(VARIANTS, 2):
                with history(variant):
                    spent, ran = asyncio.run(time_calls(args.calls, counter))
                calls.setdefault(variant, []).append(spent)
                queries[variant] = queries.get(variant, 0) + ran
    print(f"# {platform.node()} {platform.machine()} python {platform.python_version()}")
    print(
        f"# {args.database}; saves: {args.saves} x {args.rounds} rounds; "
        f"import {args.import_size} x {args.import_rounds}"
    )
    med = {k: statistics.median(v) for k, v in saves.items()}
    for what in ("tool", "prompt"):
        for measure, scale, unit in (("", 1e6, "µs"), (" cpu", 1e6, "µs CPU"), (" statements", 1, "SQL")):
            off, on = med[("off", what + measure)] * scale, med[("on", what + measure)] * scale
            print(f"{what} save: off {off:.0f} {unit}, on {on:.0f} {unit}, on ÷ off {on / off:.2f}")
    med = {k: statistics.median(v) for k, v in imports.items()}
    for what in ("create", "update"):
        off, on = med[("off", what)], med[("on", what)]
        label = f"import of {args.import_size} tools ({what})"
        print(f"{label}: off {off:.2f} s, on {on:.2f} s, on ÷ off {on / off:.2f}")
    best = {k: min(v) * 1e6 for k, v in calls.items()}
    print(
        f"tools/call CPU per call (best of 3 x {args.calls}): off {best['off']:.1f} µs, "
        f"on {best['on']:.1f} µs, on ÷ off {best['on'] / best['off']:.3f}; "
        f"SQL queries during the calls: {queries}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
