"""Tasks: a ``tools/call`` answered at once with a task the client polls, answers and cancels
(2026-07-28 extension ``io.modelcontextprotocol/tasks``, SEP-2663; 2025-11-25
basic/utilities/tasks.mdx, SEP-1686), on any worker, outliving the worker that ran it.

    wire.py     a ``TaskRecord`` as each revision shows it; the extension's capability checks
    runner.py   ``TaskRunner``: runs tasks on this worker under a lease, resumes answered ones,
                takes over the tasks of dead workers, stops cancelled ones wherever they run
    outcome.py  what a run ended with, stored exactly once (retried while the store is away)
    lapses.py   which lapsed leases a sweep may take over (seen lapsed for half a lease)
    drain.py    a stopping worker's runs: finished within the grace, else handed over or failed
    call.py     the call a task runs: stored in its record, rebuilt for each run with its context
    signals.py  what workers tell each other over the bus: stop a run, a task changed
    relay.py    2025-11-25: a parked task's questions, sent to the client on a tasks/result stream

The records are a ``TaskStore`` (``stores/tasks.py``); the methods (``tasks/get`` …) are
``methods/tasks.py``. Nothing here imports the method handlers: the server hands the runner
the function that executes a tool.
"""
