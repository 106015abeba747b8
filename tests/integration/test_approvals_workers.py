"""Approvals end to end (issue 42 item 5) on a fleet: two worker processes (A and B) sharing one
PostgreSQL database and one private Redis, the registry holding ``delete_invoice`` (policy
``confirm``) and ``wipe_disk`` (no policy of its own, annotated ``destructiveHint: true``, with
``MCP_APPROVAL_DESTRUCTIVE_DEFAULT=staff``).

- ``confirm`` with the official SDK client's elicitation handler, accepted and declined, in a
  2025-11-25 session (a real ``elicitation/create``) and in 2026-07-28 (the SDK's MRTR mode: an
  input-required round, the tool running only on the retry).
- ``staff``: a call waiting on A is released by a decision taken through the REST API on B
  (approve → the tool's result; deny → ``isError``); a call nobody decides ends at
  ``MCP_APPROVAL_TIMEOUT_SECONDS`` with ``isError`` and its approval closed as expired; each
  decision is an audit row naming who decided.

Skipped without PostgreSQL on 127.0.0.1:5432 or without redis-server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import running_fleet
from tests.support.mcp_http import modern_headers, modern_message
from tests.support.polling import eventually, within
from tests.support.postgres import temporary_database
from tests.support.private_redis import have_redis_server

pytestmark = [
    pytest.mark.timeout(180),  # the fleet's start-up counts, on a busy machine too
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
WAIT = 15.0  # s: the deadline of every wait for something the fleet does by itself
TIMEOUT = 4  # s: MCP_APPROVAL_TIMEOUT_SECONDS of the fleet
# One shell for the whole setup (each management command is a Django start-up): the tools, a
# superuser (every permission, access.decide_approval included) and their management API token.
SETUP = (
    "import uuid\n"
    "from django.contrib.auth.models import User\n"
    "from management_api.tokens import ManagementToken\n"
    "from registry.models import Tool\n"
    "schema = {'type': 'object', 'properties': {'id': {'type': 'string'}}, 'required': ['id']}\n"
    "Tool.objects.create(name='delete_invoice', kind='template', template_text='deleted {{ id }}', "
    "input_schema=schema, approval='confirm')\n"
    "Tool.objects.create(name='wipe_disk', kind='template', template_text='wiped {{ id }}', "
    "input_schema=schema, annotations={'destructiveHint': True})\n"
    "user = User.objects.create_superuser('approver', 'ci@example.com', uuid.uuid4().hex)\n"
    "print(ManagementToken.issue(user, 'approvals')[1])\n"
)


@dataclass
class Pair:
    a: LiveServer
    b: LiveServer
    token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with (
        temporary_database("mcpsite_approvals") as database_url,
        running_fleet(
            tmp_path_factory.mktemp("redis"),
            provider=REGISTRY_PROVIDER,
            database_url=database_url,
            MCP_APPROVAL_DESTRUCTIVE_DEFAULT="staff",
            MCP_APPROVAL_TIMEOUT_SECONDS=str(TIMEOUT),
        ) as fleet,
    ):
        fleet.migrate()
        token = fleet.manage("shell", "-c", SETUP).strip().splitlines()[-1]
        a, b = fleet.start(2)
        yield Pair(a, b, token)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


def answers(*confirm: bool | None) -> tuple[list[str], Any]:
    """An elicitation handler answering accept+confirm (True), decline (False) or cancel (None),
    in turn; and the messages it was shown."""
    from mcp import types

    shown: list[str] = []
    queue = list(confirm)

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        shown.append(params.message)
        choice = queue.pop(0)
        if choice is None:
            return types.ElicitResult(action="cancel")
        if choice:
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="decline")

    return shown, on_elicit


async def test_confirm_accepted_then_declined_with_the_sdk_client_in_a_2025_11_25_session(pair: Pair) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    shown, on_elicit = answers(True, False)
    async with asyncio.timeout(WAIT):
        async with (
            streamable_http_client(pair.a.url) as (read, write),
            ClientSession(read, write, elicitation_callback=on_elicit) as session,
        ):
            await session.initialize()
            accepted = await session.call_tool("delete_invoice", {"id": "INV-7"})
            declined = await session.call_tool("delete_invoice", {"id": "INV-8"})
    assert not accepted.is_error and accepted.content[0].text == "deleted INV-7"  # type: ignore[union-attr]
    assert declined.is_error and "not approved" in declined.content[0].text  # type: ignore[union-attr]
    assert "delete_invoice" in shown[0] and "INV-7" in shown[0] and "INV-8" in shown[1]


async def test_confirm_accepted_then_declined_with_the_sdk_client_in_2026_07_28(pair: Pair) -> None:
    from mcp.client.client import Client

    shown, on_elicit = answers(True, None)
    client = Client(pair.b.url, mode="2026-07-28", elicitation_callback=on_elicit)
    async with asyncio.timeout(WAIT), client as c:
        accepted = await c.call_tool("delete_invoice", {"id": "INV-9"})
        cancelled = await c.call_tool("delete_invoice", {"id": "INV-10"})
    assert not accepted.is_error and accepted.content[0].text == "deleted INV-9"  # type: ignore[union-attr]
    assert cancelled.is_error and "not approved" in cancelled.content[0].text  # type: ignore[union-attr]
    assert len(shown) == 2  # one question per call: the retry carried the answer


async def test_confirm_in_2026_07_28_answers_input_required_before_the_tool_runs(
    pair: Pair, client: httpx.AsyncClient
) -> None:
    message = modern_message(
        1, "tools/call", {"name": "delete_invoice", "arguments": {"id": "X"}}, {"elicitation": {}}
    )
    first = (await client.post(pair.a.url, json=message, headers=modern_headers(message))).json()["result"]
    assert first["resultType"] == "input_required"
    assert list(first["inputRequests"]) == ["mcpsite/approval"]
    bare = modern_message(2, "tools/call", {"name": "delete_invoice", "arguments": {"id": "X"}}, {})
    refused = (await client.post(pair.a.url, json=bare, headers=modern_headers(bare))).json()["result"]
    assert refused["isError"] is True and "cannot be asked" in refused["content"][0]["text"]


async def _pending(
    pair: Pair, client: httpx.AsyncClient, worker: LiveServer, argument: str
) -> dict[str, Any]:
    """The pending approval of the call with ``id=argument``, as the API on ``worker`` lists it."""
    found: list[dict[str, Any]] = []

    async def listed() -> bool:
        reply = await client.get(
            f"{worker.base_url}/api/v1/approvals/", params={"pending": "true"}, headers=pair.auth
        )
        assert reply.status_code == 200, reply.text
        found[:] = [row for row in reply.json()["results"] if row["arguments"] == {"id": argument}]
        return bool(found)

    await eventually(listed, seconds=WAIT, step=0.05)
    return found[0]


async def _modern_call(client: httpx.AsyncClient, url: str, argument: str) -> dict[str, Any]:
    message = modern_message(1, "tools/call", {"name": "wipe_disk", "arguments": {"id": argument}})
    reply = await client.post(url, json=message, headers=modern_headers(message))
    assert reply.status_code == 200, reply.text
    return reply.json()["result"]


async def _audited(pair: Pair, client: httpx.AsyncClient, method: str, approval: int) -> dict[str, Any]:
    reply = await client.get(f"{pair.b.base_url}/api/v1/audit/", params={"method": method}, headers=pair.auth)
    assert reply.status_code == 200, reply.text
    [row] = [r for r in reply.json()["results"] if r["arguments"]["approval"] == approval]
    return row


@pytest.mark.parametrize("verdict", ["approve", "deny"])
async def test_a_staff_decision_through_the_api_on_b_releases_the_call_waiting_on_a(
    pair: Pair, client: httpx.AsyncClient, verdict: str
) -> None:
    argument = f"disk-{verdict}"
    call = asyncio.create_task(_modern_call(client, pair.a.url, argument))
    row = await _pending(pair, client, pair.b, argument)
    assert row["tool"] == "wipe_disk" and row["decision"] == "" and row["pending"] is True
    assert not call.done()  # still waiting on A
    url = f"{pair.b.base_url}/api/v1/approvals/{row['id']}/{verdict}"
    decided = await client.post(url, headers=pair.auth)
    assert decided.status_code == 200, decided.text
    assert decided.json()["decided_by"] == "approver"
    result = await within(call, WAIT)
    if verdict == "approve":
        assert result["content"][0]["text"] == f"wiped {argument}" and not result.get("isError")
    else:
        assert result["isError"] is True and "Staff denied" in result["content"][0]["text"]
    again = await client.post(f"{pair.a.base_url}/api/v1/approvals/{row['id']}/approve", headers=pair.auth)
    assert again.status_code == 409  # the first decision stands
    audit = await _audited(pair, client, f"approval/{verdict}", row["id"])
    assert audit["principal"] == "staff:approver" and audit["name"] == "wipe_disk"
    assert audit["outcome"] == ("approved" if verdict == "approve" else "denied")


async def test_a_staff_call_nobody_decides_ends_at_the_timeout_and_is_closed_as_expired(
    pair: Pair, client: httpx.AsyncClient
) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with asyncio.timeout(WAIT + TIMEOUT):
        async with (
            streamable_http_client(pair.a.url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("wipe_disk", {"id": "disk-late"})
    assert result.is_error and f"No staff decision within {TIMEOUT} s" in result.content[0].text  # type: ignore[union-attr]
    listed = await client.get(
        f"{pair.b.base_url}/api/v1/approvals/", params={"tool": "wipe_disk"}, headers=pair.auth
    )
    [row] = [r for r in listed.json()["results"] if r["arguments"] == {"id": "disk-late"}]
    assert row["decision"] == "expired" and row["decided_by"] is None
    late = await client.post(f"{pair.b.base_url}/api/v1/approvals/{row['id']}/approve", headers=pair.auth)
    assert late.status_code == 409
    audit = await _audited(pair, client, "approval/expire", row["id"])
    assert audit["principal"] == "timeout"

