"""Traces across a fleet: two workers (A and B) sharing PostgreSQL and a private Redis, both
exporting with the real OTLP exporter to one receiver on loopback (tests/support/otlp.py).

- A tool created through the REST API on A publishes the change inside a PRODUCER span; B's
  fan-out of it is a CONSUMER span of the same trace, its child: one trace shows an edit on one
  worker reaching the streams of another.
- A tools/call on B with Redis stores is one trace: the HTTP request's SERVER span (the child of
  its ``traceparent`` header) holding the session's Redis round trips and the MCP request's span,
  which holds the handler's. The audit row it makes is written later in a batch: that batch's
  "audit write" span links back to the call's span.
- A server→client request (sampling) raised on B and answered by a POST to A: B's CLIENT span of
  the request links to A's span of the POST that brought the answer.

Skipped without PostgreSQL on 127.0.0.1:5432 or without redis-server.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import running_fleet
from tests.support.mcp_http import (
    POST_HEADERS,
    initialize_message,
    next_data,
    notification,
    open_session,
    request,
    session_headers,
    sse_events,
)
from tests.support.otlp import OtlpReceiver, ReceivedSpan
from tests.support.postgres import temporary_database
from tests.support.private_redis import have_redis_server

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server"),
]
INTERNAL, SERVER, CLIENT, PRODUCER, CONSUMER = 1, 2, 3, 4, 5  # OTLP protobuf SpanKind


@dataclass
class TracedPair:
    a: LiveServer
    b: LiveServer
    token: str
    otlp: OtlpReceiver


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TracedPair]:
    with (
        OtlpReceiver() as otlp,
        temporary_database("mcpsite_tracing") as database_url,
        running_fleet(
            tmp_path_factory.mktemp("redis"),
            provider=REGISTRY_PROVIDER,
            database_url=database_url,
            OTEL_EXPORTER_OTLP_ENDPOINT=otlp.endpoint,
            OTEL_BSP_SCHEDULE_DELAY="50",
        ) as fleet,
    ):
        fleet.migrate()
        fleet.manage("load_demo")
        admin = ["createsuperuser", "--noinput", "--username", "ci", "--email", "ci@example.com"]
        fleet.manage(*admin, DJANGO_SUPERUSER_PASSWORD=uuid.uuid4().hex)
        token = fleet.manage("create_management_token", "--user", "ci", "--name", "tracing").strip()
        a, b = fleet.start(2)
        yield TracedPair(a, b, token, otlp)


def test_an_edit_on_one_worker_and_its_fan_out_on_the_other_are_one_trace(pair: TracedPair) -> None:
    name = f"traced_{uuid.uuid4().hex[:8]}"
    tool = {
        "name": name,
        "kind": "template",
        "template_text": "hi",
        "input_schema": {"type": "object", "properties": {}},
    }
    made = httpx.post(
        f"{pair.a.base_url}/api/v1/tools/",
        json=tool,
        headers={"Authorization": f"Bearer {pair.token}"},
        timeout=10,
    )
    assert made.status_code == 201, made.text
    publish = pair.otlp.wait_for(
        lambda s: s.kind == PRODUCER and s.resource["service.instance.id"] == instance(pair.a)
    )
    assert publish.name == "publish registry change tools"
    fanouts = [fan_out_on(pair.otlp, instance(worker), publish.trace_id) for worker in (pair.a, pair.b)]
    for fanout in fanouts:
        assert fanout.parent_span_id == publish.span_id
        assert fanout.name == "fan out registry change tools"
        assert fanout.attributes["mcp.change.id"] == publish.attributes["mcp.change.id"]


def fan_out_on(otlp: OtlpReceiver, worker: str, trace_id: str) -> ReceivedSpan:
    return otlp.wait_for(
        lambda s: (
            s.kind == CONSUMER and s.trace_id == trace_id and s.resource["service.instance.id"] == worker
        )
    )


def instance(worker: LiveServer) -> str:
    """The ``service.instance.id`` a worker exports under: its host name and pid."""
    assert worker.process is not None
    return f"{socket.gethostname()}-{worker.process.pid}"


def test_a_tools_call_has_its_handler_and_redis_round_trips_as_children(pair: TracedPair) -> None:
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)
    with httpx.Client(timeout=10) as client:
        opened = client.post(pair.b.url, headers=POST_HEADERS, json=initialize_message())
        session = opened.headers["mcp-session-id"]
        initialized = notification("notifications/initialized")
        client.post(pair.b.url, headers=session_headers(session), json=initialized)
        called = client.post(
            pair.b.url,
            headers={**session_headers(session), "traceparent": f"00-{trace_id}-{parent}-01"},
            json=request(5, "tools/call", {"name": "echo", "arguments": {"message": "traced"}}),
        )
        assert called.status_code == 200, called.text
    http = pair.otlp.wait_for(lambda s: s.trace_id == trace_id and s.name == "POST /mcp")
    assert http.kind == SERVER and http.parent_span_id == parent
    call = pair.otlp.wait_for(lambda s: s.trace_id == trace_id and s.name == "tools/call echo")
    assert call.kind == SERVER and call.parent_span_id == http.span_id
    handler = pair.otlp.wait_for(lambda s: s.trace_id == trace_id and s.name == "handle tools/call")
    assert handler.parent_span_id == call.span_id
    # The session's load and save: Redis round trips of the same HTTP request.
    redis = pair.otlp.wait_for(lambda s: s.trace_id == trace_id and s.name == "redis")
    assert redis.attributes["db.system.name"] == "redis"
    # The audit row is written after the answer, in a batch of its own trace, linked to the call.
    audit = pair.otlp.wait_for(lambda s: s.name == "audit write" and (call.trace_id, call.span_id) in s.links)
    assert audit.kind == INTERNAL and audit.parent_span_id == ""
    assert audit.attributes["mcp.audit.entries"] >= 1


def test_a_sampling_request_answered_on_the_other_worker_links_to_the_answer(pair: TracedPair) -> None:
    answer_trace, answer_parent = secrets.token_hex(16), secrets.token_hex(8)

    async def ask_on_b_answer_on_a() -> None:
        async with httpx.AsyncClient(timeout=10) as client:
            session = await open_session(client, pair.b.url)
            call = request(3, "tools/call", {"name": "ask_llm", "arguments": {"question": "A word?"}})
            async with client.stream(
                "POST", pair.b.url, headers=session_headers(session), json=call
            ) as stream:
                events = sse_events(stream)
                asked = (await next_data(events)).message
                assert asked["method"] == "sampling/createMessage"
                answer = {
                    "jsonrpc": "2.0",
                    "id": asked["id"],
                    "result": {
                        "role": "assistant",
                        "content": {"type": "text", "text": "traced"},
                        "model": "m",
                    },
                }
                traced = {"traceparent": f"00-{answer_trace}-{answer_parent}-01"}
                sent = await client.post(pair.a.url, headers=session_headers(session, **traced), json=answer)
                assert sent.status_code == 202, sent.text
                result = (await next_data(events)).message
                assert result["id"] == 3 and "traced" in result["result"]["content"][0]["text"]

    asyncio.run(ask_on_b_answer_on_a())
    answered = pair.otlp.wait_for(lambda s: s.trace_id == answer_trace and s.name == "POST /mcp")
    assert answered.resource["service.instance.id"] == instance(pair.a)
    asked = pair.otlp.wait_for(
        lambda s: s.name == "sampling/createMessage" and (answered.trace_id, answered.span_id) in s.links
    )
    assert asked.kind == CLIENT and asked.resource["service.instance.id"] == instance(pair.b)
    assert asked.attributes["mcp.method.name"] == "sampling/createMessage"
    # Inside the call it serves: the same trace as B's span of tools/call ask_llm.
    pair.otlp.wait_for(lambda s: s.trace_id == asked.trace_id and s.name == "tools/call ask_llm")


def test_a_task_run_is_a_span_of_the_tools_call_that_made_the_task(pair: TracedPair) -> None:
    name = f"tasked_{uuid.uuid4().hex[:8]}"
    tool = {"name": name, "kind": "handler", "handler": "demo.echo", "task_support": "optional",
            "input_schema": {"type": "object", "properties": {"message": {"type": "string"}}}}
    made = httpx.post(f"{pair.a.base_url}/api/v1/tools/", json=tool,
                      headers={"Authorization": f"Bearer {pair.token}"}, timeout=10)
    assert made.status_code == 201, made.text
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)

    async def call_as_task_on_b() -> None:
        async with httpx.AsyncClient(timeout=10) as client:
            session = await open_session(client, pair.b.url)
            call = request(1, "tools/call", {"name": name, "arguments": {"message": "m"}, "task": {}})
            traced = {"traceparent": f"00-{trace_id}-{parent}-01"}
            created = await client.post(pair.b.url, headers=session_headers(session, **traced), json=call)
            assert created.status_code == 200, created.text
            task = created.json()["result"]["task"]
            result = await client.post(pair.b.url, headers=session_headers(session), json=request(
                2, "tasks/result", {"taskId": task["taskId"]}))
            assert result.status_code == 200 and "result" in result.json(), result.text

    asyncio.run(call_as_task_on_b())
    run = pair.otlp.wait_for(lambda s: s.trace_id == trace_id and s.name == f"run task {name}")
    assert run.kind == CONSUMER and run.attributes["gen_ai.tool.name"] == name
    call = pair.otlp.wait_for(lambda s: s.trace_id == trace_id and s.name == f"tools/call {name}")
    handler = pair.otlp.wait_for(lambda s: s.trace_id == trace_id and s.name == "handle tools/call")
    assert handler.parent_span_id == call.span_id and run.parent_span_id == handler.span_id
