"""What a legacy HTTP+SSE upstream says during a call, routed to that call's ``Relay`` (issue 40
item 4: "logging relayed", "the upstream's server→client requests relayed … in both eras").

Over the legacy transport (2024-11-05 basic/transports.mdx "HTTP with SSE") every message the
upstream sends comes on the session's one SSE stream, where the official SDK hands it to the
session's callbacks (``logging_callback``, ``sampling_callback``, ``elicitation_callback``,
``list_roots_callback``), not to the request that caused it: unlike Streamable HTTP, where a
request's messages come on that request's response stream (``wire.py``), nothing on the wire
ties a log message or an elicitation to the call it belongs to (a server's ``related_request_id``
stays inside its transport; only progress names its request, by token: ``sdk_calls.py``).

So ``Calls`` keeps the relays of the calls in flight on one SDK session (one per ``pool.Live``)
and routes by that map: with exactly one call in flight, what arrives is that call's (the
session is our worker's alone, and the upstream talks to us only about requests we made), and
goes to its ``Relay``, which applies our client's capabilities and log level (``relay.py``).
With several in flight it is ambiguous: a question is refused (the upstream's tool sees a
JSON-RPC error, as when our client lacks the capability) and a log message dropped, never
guessed: a guess could hand one caller's elicitation, or its log, to another. With none (a log
between calls) it is dropped, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any

import pydantic
from mcp import types as sdk
from mcp.client.session import ClientRequestContext

from .relay import Relay

INTERNAL_ERROR = -32603
SETTLE_TURNS = 8  # event-loop turns a call's end waits for its spawned notification callbacks
_SAMPLED: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(
    sdk.CreateMessageResult | sdk.CreateMessageResultWithTools)
_ELICITED: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(sdk.ElicitResult)
_ROOTS: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(sdk.ListRootsResult)
AMBIGUOUS = "several calls are in flight on this session: the request cannot be routed to its caller"


class Calls:
    """The calls in flight on one legacy SDK session, and the SDK callbacks that reach them."""

    def __init__(self) -> None:
        self._relays: dict[int, Relay] = {}
        self._keys = itertools.count()

    @contextlib.asynccontextmanager
    async def during(self, relay: Relay) -> AsyncIterator[None]:
        """``relay`` receives what the upstream says while the block runs (one call)."""
        key = next(self._keys)
        self._relays[key] = relay
        try:
            yield
            # The SDK runs each notification's callback in a task of its own, spawned when it
            # arrived (before the result, on the one stream): let those spawned before the result
            # run while this call is still the one in flight, or its last log messages are lost.
            for _ in range(SETTLE_TURNS):
                await asyncio.sleep(0)
        finally:
            del self._relays[key]

    def _caller(self) -> Relay | None:
        if len(self._relays) != 1:
            return None
        return next(iter(self._relays.values()))

    def callbacks(self) -> dict[str, Any]:
        """The ``mcp`` ``Client`` keyword arguments that route the session's callbacks here."""
        return {"sampling_callback": self.sampling, "elicitation_callback": self.elicitation,
                "list_roots_callback": self.roots, "logging_callback": self.logged}

    async def logged(self, params: sdk.LoggingMessageNotificationParams) -> None:
        relay = self._caller()
        if relay is not None:
            await relay.notified("notifications/message",
                                 params.model_dump(by_alias=True, mode="json", exclude_none=True))

    async def sampling(self, context: ClientRequestContext,
                       params: sdk.CreateMessageRequestParams) -> Any:
        return await self._ask("sampling/createMessage", params, _SAMPLED)

    async def elicitation(self, context: ClientRequestContext, params: sdk.ElicitRequestParams) -> Any:
        return await self._ask("elicitation/create", params, _ELICITED)

    async def roots(self, context: ClientRequestContext) -> Any:
        return await self._ask("roots/list", None, _ROOTS)

    async def _ask(self, method: str, params: pydantic.BaseModel | None,
                   result_type: pydantic.TypeAdapter[Any]) -> Any:
        relay = self._caller()
        if relay is None:
            message = AMBIGUOUS if self._relays else "relayed to our client only within a call"
            return sdk.ErrorData(code=INTERNAL_ERROR if self._relays else -32601, message=message)
        wire = params.model_dump(by_alias=True, mode="json", exclude_none=True) if params is not None else {}
        answer = await relay.asked(method, wire)
        if "error" in answer:
            error = answer["error"]
            return sdk.ErrorData(code=int(error.get("code", INTERNAL_ERROR)),
                                 message=str(error.get("message")), data=error.get("data"))
        try:
            return result_type.validate_python(answer["result"])
        except pydantic.ValidationError:
            return sdk.ErrorData(code=INTERNAL_ERROR, message=f"the client's answer to {method} is invalid")
