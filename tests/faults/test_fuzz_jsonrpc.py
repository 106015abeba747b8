"""Property-based fuzzing of the JSON-RPC layer of ``/mcp`` in-process (hypothesis, bounded).

Bodies (random bytes, mangled JSON texts, well-formed messages of every method of every revision
with params of any shape and ids of any type), and headers (versions, session ids, Accept): never
a 500; every body the endpoint answers is a JSON-RPC message; a JSON-RPC error for a request whose
id was readable carries that id; and a bystander session keeps answering throughout.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from mcp_protocol.transports import runtime
from mcp_protocol.transports.http import MCPEndpoint
from tests.support.asgi_call import JSON_POST, MEMORY_MCP, Reply, call, open_session
from tests.support.jsonrpc_fuzz import PING, bodies, check_reply, header_sets

EXAMPLES = 250  # per property: the three together run in about 15 s on the 2-core box


class Harness:
    """One endpoint, one fuzzed session and one bystander session, on one event loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.endpoint = MCPEndpoint()
        self.fuzzed = self.run(open_session(self.endpoint))
        self.bystander = self.run(open_session(self.endpoint, "2025-06-18"))
        self.calls = 0

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def post(self, body: bytes, extra: dict[bytes, bytes] | None = None) -> Reply:
        headers = dict(self.fuzzed)
        headers.update(extra or {})
        reply = self.run(call(self.endpoint, body, list(headers.items())))
        self.calls += 1
        if self.calls % 25 == 0:  # the bystander still answers
            ping = self.run(call(self.endpoint, PING, self.bystander))
            assert ping.status == 200 and ping.json() == {"jsonrpc": "2.0", "id": "b", "result": {}}, ping
        return reply

    def close(self) -> None:
        self.run(runtime.shutdown())
        self.loop.close()


@pytest.fixture(scope="module")
def harness(django_db_blocker: Any) -> Any:
    from django.test import override_settings

    with override_settings(MCP=MEMORY_MCP):
        h = Harness()
        yield h
        h.close()


FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


@FUZZ
@given(body=bodies)
def test_no_body_reaches_a_500_and_errors_echo_the_readable_id(harness: Harness, body: bytes) -> None:
    check_reply(harness.post(body), body, id_expected=True)


@FUZZ
@given(body=bodies, headers=header_sets)
def test_no_header_combination_reaches_a_500(
    harness: Harness, body: bytes, headers: dict[bytes, bytes]
) -> None:
    check_reply(harness.post(body, headers), body, id_expected=False)


@FUZZ
@given(body=bodies)
def test_no_initialize_or_sessionless_body_reaches_a_500(harness: Harness, body: bytes) -> None:
    reply = harness.run(call(harness.endpoint, body, JSON_POST))
    check_reply(reply, body, id_expected=False)
