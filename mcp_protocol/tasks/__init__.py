"""Tasks: a ``tools/call`` answered at once with a task the client polls, answers and cancels
(2026-07-28 extension ``io.modelcontextprotocol/tasks``, SEP-2663; 2025-11-25
basic/utilities/tasks.mdx, SEP-1686), on any worker, outliving the worker that ran it.

    wire.py     a ``TaskRecord`` as each revision shows it; the extension's capability checks
    reach.py    who may reach a task: its principal, through a grant that still holds its tool
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

The lifecycle (``runner.py``'s ``TaskRunner``). Tasks run in the web workers, in the worker
that received the call (no queue, no separate task workers): the tool is already in this
worker's in-memory registry snapshot, so a task costs one store write more than the same call
made synchronously, and the questions a tool asks mid-task use the same replay machinery as MRTR
(``inputs.py``). Durability comes from the store, not from the process:

- **Start** (``start_call``): the tool starts at once in an asyncio task of its own; the request
  waits up to ``immediate`` seconds. A tool done by then is answered synchronously (SEP-2663
  "Immediate-result shortcut": the server decides per call); one that asked the client first
  gets the MRTR input-required result (SEP-2663 "Composition with MRTR": resolved synchronously
  before the task exists); otherwise (or once the tool calls ``ctx.run_as_task()``) the task is
  written to the store (``CreateTaskResult`` only after that: "durably created") and the tool
  runs on, under a lease renewed every ``lease / 3`` seconds.
- **Questions** mid-task: the run is stopped (replay: it must ask the same questions in the
  same order) and the task parked ``input_required``, lease released. ``tasks/update`` on any
  worker (2026-07-28), or the client's replies to the questions a ``tasks/result`` stream carries
  (2025-11-25, ``relay.py``), record the answers (``answer``); the worker that completes them
  claims the task and runs the tool again from the start with every answer so far.
- **Cancel** on any worker marks the task ``cancelled`` in the store (terminal, so the run's
  result is refused), then stops the run where it is: here at once, or through the bus channel
  ``tasks:<owner>`` of the worker holding the lease. A lost bus message is caught by the next
  renewal, which no longer renews a cancelled task and stops its run.
- **Worker death**: its leases lapse. Every worker looks for lapsed tasks every ``lease / 3``
  seconds and exactly one claims each once it has seen it lapsed for half a lease
  (``lapses.py``): a tool marked idempotent (``annotations.idempotentHint``) is run again from
  the start, any other ends ``failed`` with a retryable -32603. So a task is never ``working``
  for longer than about twice its lease past its worker's death.
- **Store outage**: a run that ends while the store is away keeps its outcome here and stores it
  once the store is back (``outcome.py``); the task stays this worker's meanwhile and never runs
  again, here or elsewhere: a run and its result are one exactly-once unit (issue 38).
- **Stop** (SIGTERM): runs get the requests' grace to finish, then are handed over (idempotent)
  or failed (``drain.py``).

Why not a queue library (pydocket, taskiq, arq): each would run the tool in a separate worker
process that does not hold the registry snapshot or the request's context, adds its own
Redis layout and polling beside the store the tasks must be in anyway (``tasks/get`` reads it
on any worker), and a queue hop on the way to a running tool; the lease and the claim are the
two Redis scripts of ``RedisTaskStore``.
"""
