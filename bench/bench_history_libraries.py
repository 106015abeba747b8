"""What a save costs with django-simple-history and with django-reversion, against no history.

Issue 28 item 1 asks to choose the history library by measuring. One run, back to back, on one
PostgreSQL database (a fresh one on 127.0.0.1:5432, dropped after): the same tool-like row (JSON
fields) and prompt-like row (a parent with three arguments and two messages, saved together as the
admin's inlines do) in three copies (``apps/history_lab``): no history, simple-history (one
historical row per saved row, by its post_save), reversion (one revision per block, the prompt
following its children). Each save is one transaction, like an admin save or an API request;
reversion's block is ``create_revision()`` inside it. Rounds interleave the variants in a new
order each time; the median per save is reported, and its ratio to no history.

    .venv/bin/python bench/bench_history_libraries.py [--saves 300] [--rounds 7]
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The repository root instead of bench/ (whose bench.py would shadow the ``bench`` namespace).
sys.path[0] = str(ROOT)

PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"


@contextmanager
def database() -> Iterator[str]:
    import psycopg

    name = f"bench_history_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def configure(name: str) -> None:
    import django
    from django.conf import settings

    settings.configure(
        DATABASES={
            "default": {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": name,
                "USER": "postgres",
                "HOST": "127.0.0.1",
                "PORT": "5432",
            }
        },
        INSTALLED_APPS=[
            "django.contrib.contenttypes",
            "django.contrib.auth",
            "simple_history",
            "reversion",
            "bench.apps.history_lab",
        ],
        USE_TZ=True,
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    )
    django.setup()
    from django.core.management import call_command

    call_command("migrate", "auth", verbosity=0)  # first: the lab's history tables refer to users
    call_command("migrate", run_syncdb=True, verbosity=0)


def variants() -> dict[str, tuple[Any, Any, Callable[[], Any]]]:
    import reversion

    from bench.apps.history_lab import models as m

    return {
        "none": (m.PlainTool, m.PlainPrompt, nullcontext),
        "simple-history": (m.SimpleTool, m.SimplePrompt, nullcontext),
        "reversion": (m.ReversionTool, m.ReversionPrompt, reversion.create_revision),
    }


def make_rows(tool_model: Any, prompt_model: Any, count: int) -> tuple[list[Any], list[Any]]:
    schema = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
    tools = [
        tool_model.objects.create(
            name=f"t{i}",
            description="d",
            input_schema=schema,
            annotations={"readOnlyHint": True},
            template_text="Hi {{ who }}",
        )
        for i in range(count)
    ]
    prompts = []
    for i in range(count):
        prompt = prompt_model.objects.create(name=f"p{i}", description="d")
        for a in range(3):
            prompt.arguments.create(name=f"a{a}", description="arg")
        for r in ("user", "assistant"):
            prompt.messages.create(role=r, content={"type": "text", "text": "Hello {{ a0 }}"})
        prompts.append(prompt)
    return tools, prompts


def time_tools(tools: list[Any], block: Callable[[], Any]) -> float:
    from django.db import transaction

    started = time.perf_counter()
    for n, tool in enumerate(tools):
        with transaction.atomic(), block():
            tool.description = f"edit {n} {time.time()}"
            tool.version += 1
            tool.save()
    return (time.perf_counter() - started) / len(tools)


def time_prompts(prompts: list[Any], block: Callable[[], Any]) -> float:
    from django.db import transaction

    children = {p.pk: (list(p.arguments.all()), list(p.messages.all())) for p in prompts}
    started = time.perf_counter()
    for n, prompt in enumerate(prompts):
        with transaction.atomic(), block():
            prompt.description = f"edit {n} {time.time()}"
            prompt.save()
            arguments, messages = children[prompt.pk]
            for child in (*arguments, *messages):
                child.save()  # the admin saves every inline form that changed; here all of them
    return (time.perf_counter() - started) / len(prompts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--saves", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with database() as name:
        configure(name)
        chosen = variants()
        rows = {key: make_rows(tool, prompt, args.saves) for key, (tool, prompt, _) in chosen.items()}
        results: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            order = list(chosen)
            random.shuffle(order)
            for key in order:
                block = chosen[key][2]
                tools, prompts = rows[key]
                results.setdefault((key, "tool"), []).append(time_tools(tools, block))
                results.setdefault((key, "prompt"), []).append(time_prompts(prompts, block))
    print(
        f"# {platform.node()} {platform.processor() or platform.machine()} python {platform.python_version()}"
    )
    print(
        f"# {args.saves} saves x {args.rounds} rounds per variant, median of the rounds, "
        "one transaction per save"
    )
    print(f"{'variant':16} {'tool save µs':>14} {'÷ none':>8} {'prompt+5 children µs':>22} {'÷ none':>8}")
    for key in chosen:
        tool = statistics.median(results[(key, "tool")]) * 1e6
        prompt = statistics.median(results[(key, "prompt")]) * 1e6
        base_tool = statistics.median(results[("none", "tool")]) * 1e6
        base_prompt = statistics.median(results[("none", "prompt")]) * 1e6
        print(f"{key:16} {tool:14.0f} {tool / base_tool:8.2f} {prompt:22.0f} {prompt / base_prompt:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
