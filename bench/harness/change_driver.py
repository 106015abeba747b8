"""The change driver of the fan-out benches (``bench_fanout.py``, ``bench_scale.py``): a separate
process (Django ORM, real commits) that edits the ``echo`` tool once per line read on stdin and
prints each commit's wall-clock time, taken on commit, before the change is published."""

from __future__ import annotations

import json
import sys
import time


def commit_changes(label: str) -> None:
    import django

    django.setup()
    from django.db import transaction

    from registry.models import Tool

    stamp: list[float] = []
    for n, _ in enumerate(sys.stdin):
        stamp.clear()
        with transaction.atomic():
            transaction.on_commit(lambda: stamp.append(time.time()))  # runs before the publish
            tool = Tool.objects.get(name="echo")
            tool.description = f"Echo ({label} change {n})"
            tool.save()
        print(json.dumps({"committed": stamp[0]}), flush=True)
