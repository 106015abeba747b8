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
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from .errors import InvalidParams
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

    def __init__(self, answers: dict[str, Any], binding: Binding) -> None:
        self.answers = answers
        self.binding = binding
        self.consumed: dict[str, Any] = {}  # answers the handler used, in order: sealed for the retry
        self.questions: dict[str, dict[str, Any]] = {}
        self.asked = asyncio.Event()
        self._counts: Counter[str] = Counter()

    def key_for(self, method: str) -> str:
        kind = KIND_OF.get(method, method)
        self._counts[kind] += 1
        return f"{kind}-{self._counts[kind]}"

    async def ask(self, method: str, params: dict[str, Any] | None, key: str | None) -> dict[str, Any]:
        key = key if key is not None else self.key_for(method)
        if key in self.answers:
            answer = self.answers[key]
            missing = [m for m in _REQUIRED_MEMBERS.get(method, ()) if m not in answer]
            if missing:
                raise InvalidParams(
                    f"inputResponses[{key!r}] is not a valid {method} result (missing {', '.join(missing)})"
                )
            self.consumed[key] = answer
            return dict(answer)
        if key in self.questions:
            raise InvalidParams(f"Input request key {key!r} was asked twice in one round")
        self.questions[key] = {"method": method, "params": params if params is not None else {}}
        self.asked.set()
        # Parked: the core stops this run once its siblings had their turn.
        await asyncio.Future()
        raise AssertionError("unreachable")  # pragma: no cover


def start_round(
    method: str, params: dict[str, Any], principal: str | None, sealer: RequestStateSealer
) -> InputRound | None:
    """The round a modern request runs with: its ``inputResponses`` over the answers sealed in its
    ``requestState`` (opened and checked here: -32602 when forged, expired or another call's).
    ``None`` for methods that may not answer input-required."""
    if method not in MRTR_METHODS:
        return None
    target = params.get("uri") if method == "resources/read" else params.get("name")
    binding = Binding(principal, method, str(target), arguments_digest(params.get("arguments")))
    responses = parse_input_responses(params)
    answers: dict[str, Any] = {}
    if "requestState" in params:
        sealed = sealer.open(params["requestState"], binding).get("answers")
        answers.update(sealed if isinstance(sealed, dict) else {})
    answers.update(responses)
    return InputRound(answers, binding)


async def settle(
    task: asyncio.Future[dict[str, Any]], inputs: InputRound, sealer: RequestStateSealer
) -> dict[str, Any]:
    """The handler's result, or an input-required result once it is parked on a question."""
    asked = asyncio.ensure_future(inputs.asked.wait())
    try:
        await asyncio.wait((task, asked), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()  # the client left (or cancelled): the handler sees it
        raise
    finally:
        asked.cancel()
    if not task.done():
        for _ in range(SIBLING_TURNS):  # concurrent questions (gather) get asked too
            await asyncio.sleep(0)
        task.cancel()
        await asyncio.wait((task,))
        if task.cancelled() or task.exception() is not None:
            # mrtr.mdx: every question, and the answers consumed so far sealed for the retry.
            return {
                "resultType": "input_required",
                "inputRequests": inputs.questions,
                "requestState": sealer.seal(inputs.binding, {"answers": inputs.consumed}),
            }
    return task.result()
