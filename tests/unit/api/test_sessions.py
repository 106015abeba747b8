"""``/api/v1/sessions/``: live sessions from the session store (in-memory here; Redis across
workers in ``tests/integration/test_api_workers.py``), never showing a whole session id, and
DELETE ending a session the way an MCP DELETE does."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.test import override_settings
from rest_framework.test import APIClient

from management_api.sessions import key_of
from mcp_django.conf import mcp_settings
from mcp_protocol.bus.base import session_channel
from mcp_protocol.session import Session
from mcp_protocol.stores.events import STANDALONE_STREAM
from mcp_protocol.transports.pending import SESSION_ENDED

from .conftest import client_for, staff_with

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def memory_backends() -> Iterator[None]:
    """Fresh in-memory stores and bus for each test (backends are built once per settings)."""
    memory = {
        "SESSION_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemorySessionStore", "OPTIONS": {}},
        "EVENT_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemoryEventStore", "OPTIONS": {}},
        "BUS": {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}},
    }
    with override_settings(MCP={**settings.MCP, **memory}):
        yield


def live_sessions(count: int, principal: str | None = None) -> list[Session]:
    store = mcp_settings.backend("SESSION_STORE")
    made = []
    for n in range(count):
        session = Session.create(principal)
        session.protocol_version, session.state = "2025-11-25", "ready"
        session.client_info = {"name": f"client{n}", "version": "1"}
        session.created_at = 1_700_000_000.0 + n // 2
        async_to_sync(store.create)(session)
        made.append(session)
    return sorted(made, key=lambda s: (s.created_at, s.id), reverse=True)


def test_sessions_are_listed_newest_first_without_their_ids(api: APIClient) -> None:
    sessions = live_sessions(3, principal="alice")
    async_to_sync(mcp_settings.backend("EVENT_STORE").claims.claim_stream)(sessions[1].id, "worker", 30)
    answer = api.get("/api/v1/sessions/")
    assert answer.status_code == 200
    rows = answer.json()["results"]
    assert [r["key"] for r in rows] == [key_of(s.id) for s in sessions]
    first = rows[0]
    assert first["id"] == sessions[0].id[:8] + "…" and sessions[0].id not in answer.content.decode()
    assert (first["principal"], first["protocol_version"], first["state"]) == ("alice", "2025-11-25", "ready")
    assert first["client_info"]["name"].startswith("client")
    assert first["created_at"].startswith("2023-11-14T22:1") and first["last_seen"]
    assert [r["standalone_stream"] for r in rows] == [False, True, False]


def test_pages_follow_the_cursor_through_every_session_once(api: APIClient) -> None:
    sessions = live_sessions(7)
    seen: list[str] = []
    url: str | None = "/api/v1/sessions/?page_size=2"
    while url:
        page = api.get(url).json()
        seen += [r["key"] for r in page["results"]]
        url = page["next"]
    assert seen == [key_of(s.id) for s in sessions]
    assert api.get("/api/v1/sessions/?cursor=forged").status_code == 400
    assert api.get("/api/v1/sessions/?page_size=0").status_code == 400


async def _delete_and_watch(client: APIClient, session: Session) -> tuple[int, dict[str, Any]]:
    from asgiref.sync import sync_to_async

    subscription = await mcp_settings.backend("BUS").subscribe(session_channel(session.id))
    answer = await sync_to_async(client.delete)(f"/api/v1/sessions/{key_of(session.id)}/")
    message = await asyncio.wait_for(anext(subscription.__aiter__()), 5)
    await subscription.close()
    return answer.status_code, message


def test_delete_ends_the_session_as_an_mcp_delete_does(api: APIClient) -> None:
    session, other = live_sessions(2)
    events = mcp_settings.backend("EVENT_STORE")
    async_to_sync(events.append)(session.id, STANDALONE_STREAM, {"jsonrpc": "2.0", "method": "x"})
    status, message = async_to_sync(_delete_and_watch)(api, session)
    assert status == 204
    # Every worker hears it on the session's channel: its requests there stop.
    assert message == {"method": SESSION_ENDED}
    store = mcp_settings.backend("SESSION_STORE")
    assert async_to_sync(store.load)(session.id) is None  # every worker now answers 404
    assert async_to_sync(store.load)(other.id) is not None  # the others go on
    assert api.delete(f"/api/v1/sessions/{key_of(session.id)}/").status_code == 404
    assert api.delete(f"/api/v1/sessions/{'0' * 32}/").status_code == 404


def test_sessions_need_their_own_permissions(db: None) -> None:
    (session,) = live_sessions(1)
    url = f"/api/v1/sessions/{key_of(session.id)}/"
    viewer = client_for(staff_with("view_livesession"))
    assert viewer.get("/api/v1/sessions/").status_code == 200
    assert viewer.delete(url).status_code == 403
    assert client_for(staff_with("view_tool")).get("/api/v1/sessions/").status_code == 403
    assert client_for(staff_with("view_livesession", "delete_livesession")).delete(url).status_code == 204
