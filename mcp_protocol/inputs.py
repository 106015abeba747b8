"""Input-required results (MRTR, 2026-07-28 basic/patterns/mrtr.mdx) by replay.

A handler asks the client for something the same way in both eras: ``await ctx.elicit(...)``,
``ctx.sample(...)``, ``ctx.list_roots()``. In a legacy session that is a real server→client
request. In a modern request the handler runs with an ``InputRound``: every question has a
deterministic key (given by the handler, or ``<kind>-<n>`` in the order asked), and

- if the client already answered that key (``inputResponses`` of this retry, or answers of
  earlier rounds carried in the sealed ``requestState``), the answer is returned at once;
- otherwise the question is recorded and the handler is parked. The core then lets sibling
  questions asked concurrently (``asyncio.gather``) be recorded too, stops the handler, and
  answers ``InputRequiredResult`` with every recorded question plus a ``requestState`` sealing the
  answers the handler consumed. The retry runs the handler again from the start; this time those
  answers are there.

So a handler must ask the same questions in the same order given the same answers (it is
re-run), and must do nothing before its last question that it would regret doing twice.

Which methods may answer input-required: ``tools/call``, ``resources/read``, ``prompts/get``
("Supported Requests"; MUST NOT on any other).

A task's run asks the same way in both eras (``tasks/runner.py``): its questions are parked in
the task store. In 2026-07-28 the client answers them by ``tasks/update``; in 2025-11-25 they are
relayed to the client as real requests on a ``tasks/result`` stream (``tasks/relay.py``), whose
error replies are recorded as refusals (``refusal``) and raised on replay as the refused request
would have raised outside a task.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from .errors import ClientRequestError, InvalidParams
from .request_state import Binding, RequestStateSealer, arguments_digest

MRTR_METHODS = frozenset({"tools/call", "resources/read", "prompts/get"})
KIND_OF = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
# What each answer must look like to be handed to the handler (schema.ts ElicitResult,
# CreateMessageResult, ListRootsResult: the members every valid answer has).
_REQUIRED_MEMBERS = {
    "elicitation/create": ("action",),
    "sampling/createMessage": ("role", "content"),
    "roots/list": ("roots",),
}
# Loop turns given to concurrent siblings (asyncio.gather) to ask their own question before the
# handler is stopped: each starts on the next turn and asks before its first real await.
SIBLING_TURNS = 3
# The answer recorded for a relayed question the client answered with a JSON-RPC error.
REFUSED = "mcpsite/refused"


def refusal(error: dict[str, Any]) -> dict[str, Any]:
    """What a relayed question's JSON-RPC error reply is recorded as (only a relayed round,
    ``InputRound(relayed=True)``, reads it: a 2026-07-28 client cannot refuse this way)."""
    return {REFUSED: error}


def parse_input_responses(params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``params.inputResponses``: an object whose values are result objects, else -32602."""
    responses = params.get("inputResponses")
    if responses is None:
        return {}
    if not isinstance(responses, dict):
        raise InvalidParams("params.inputResponses must be an object")
    for key, value in responses.items():
        if not isinstance(value, dict):
            raise InvalidParams(f"params.inputResponses[{key!r}] must be a result object")
    return responses


class InputRound:
    """The questions and answers of one modern request's handler run."""

    def __init__(
        self,
        answers: dict[str, Any],
        binding: Callable[[], Binding],
        *,
        relayed: bool = False,
        sealed: dict[str, Any] | None = None,
    ) -> None:
        self.answers = answers
        # What the server itself sealed in an earlier round's requestState (never the client's
        # inputResponses, which may name any key): what only the server may vouch for, such as a
        # staff approval already given (approvals.py), is read from here, not from ``answers``.
        self.sealed: dict[str, Any] = sealed if sealed is not None else {}
        self.relayed = relayed  # a 2025-11-25 task's: its answers may be refusals
        self._binding = binding
        self.consumed: dict[str, Any] = {}  # answers the handler used, in order: sealed for the retry
        self.questions: dict[str, dict[str, Any]] = {}
        self.task: asyncio.Task[Any] | None = None  # the task the handler runs in, set by the core
        self.parked = False  # the run was stopped because it asked something
        self._counts: dict[str, int] = {}  # a dict, not a Counter: one of these per modern call

    def fork(self) -> InputRound:
        """A round with the same answers for a run of its own (a task's: tasks/runner.py), so
        stopping that run leaves the request's round as it is."""
        return InputRound(self.answers, self._binding, relayed=self.relayed, sealed=self.sealed)

    @functools.cached_property
    def binding(self) -> Binding:
        """Computed only when a state is sealed or opened (the digest costs a JSON dump)."""
        return self._binding()

    def key_for(self, method: str) -> str:
        kind = KIND_OF.get(method, method)
        count = self._counts[kind] = self._counts.get(kind, 0) + 1
        return f"{kind}-{count}"

    async def ask(self, method: str, params: dict[str, Any] | None, key: str | None) -> dict[str, Any]:
        key = key if key is not None else self.key_for(method)
        if key in self.answers:
            answer = self.answers[key]
            if self.relayed and REFUSED in answer:
                self.consumed[key] = answer
                raise ClientRequestError(f"The client answered {method} with an error", answer[REFUSED])
            missing = [m for m in _REQUIRED_MEMBERS.get(method, ()) if m not in answer]
            if missing:
                raise InvalidParams(
                    f"inputResponses[{key!r}] is not a valid {method} result (missing {', '.join(missing)})"
                )
            self.consumed[key] = answer
            return dict(answer)
        if key in self.questions:
            raise InvalidParams(f"Input request key {key!r} was asked twice in one round")
        if not self.questions:
            # The first question: stop the run once concurrent siblings (gather) had their turns.
            self._stop_after(asyncio.get_running_loop(), SIBLING_TURNS)
        self.questions[key] = {"method": method, "params": params if params is not None else {}}
        await asyncio.Future()  # parked until stopped
        raise AssertionError("unreachable")  # pragma: no cover

    def _stop_after(self, loop: asyncio.AbstractEventLoop, turns: int) -> None:
        if turns:
            loop.call_soon(self._stop_after, loop, turns - 1)
        elif self.task is not None and not self.task.done():
            self.parked = True
            self.task.cancel()


def start_round(
    method: str, params: dict[str, Any], principal: str | None, sealer: RequestStateSealer
) -> InputRound | None:
    """The round a modern request runs with: its ``inputResponses`` over the answers sealed in its
    ``requestState`` (opened and checked here: -32602 when forged, expired or another call's).
    ``None`` for methods that may not answer input-required."""
    if method not in MRTR_METHODS:
        return None
    target = params.get("uri") if method == "resources/read" else params.get("name")

    def binding() -> Binding:
        return Binding(principal, method, str(target), arguments_digest(params.get("arguments")))

    responses = parse_input_responses(params)
    answers: dict[str, Any] = {}
    inputs = InputRound(answers, binding)
    if "requestState" in params:
        sealed = sealer.open(params["requestState"], inputs.binding).get("answers")
        inputs.sealed = dict(sealed) if isinstance(sealed, dict) else {}
        answers.update(inputs.sealed)
    answers.update(responses)
    return inputs


def questions(inputs: InputRound, sealer: RequestStateSealer) -> dict[str, Any]:
    """The input-required result of a run stopped on its questions (mrtr.mdx): every question,
    and the answers consumed so far sealed for the retry. (The core stops the run by cancelling
    it in the request's own task: a run that asks nothing costs what any call costs.)"""
    return {
        "resultType": "input_required",
        "inputRequests": inputs.questions,
        "requestState": sealer.seal(inputs.binding, {"answers": inputs.consumed}),
    }
