"""The admin's "Live MCP sessions" page (``management_api/session_admin.py``): the session store's
sessions for ``view_livesession``, "End session" for ``delete_livesession``, ending as the API's
DELETE does. A real client's session, in a real server, is ended in
``tests/integration/test_admin_browser.py``."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.urls import reverse

from management_api.sessions import key_of
from mcp_django.conf import mcp_settings

from .conftest import client_for, staff_with
from .test_sessions import live_sessions, memory_backends  # noqa: F401  (fresh stores per test)

URL = "/admin/management_api/livesession/"


def test_the_page_lists_live_sessions_by_their_ids_start_for_viewers(db: None) -> None:
    sessions = live_sessions(2, principal="alice")
    assert reverse("admin:management_api_livesession_changelist") == URL
    viewer = client_for(staff_with("view_livesession"))
    html = viewer.get(URL).content.decode()
    for session in sessions:
        assert f'data-key="{key_of(session.id)}"' in html
        assert session.id[:8] in html and session.id not in html  # the id is a credential
    assert "End session" not in html  # viewing is not ending
    assert viewer.post(URL, {"key": key_of(sessions[0].id)}).status_code == 403
    assert client_for(staff_with()).get(URL).status_code == 403


def test_end_session_ends_it_in_the_store(db: None) -> None:
    sessions = live_sessions(2)
    ender = client_for(staff_with("view_livesession", "delete_livesession"))
    assert "End session" in ender.get(URL).content.decode()
    answer = ender.post(URL, {"key": key_of(sessions[0].id)}, follow=True)
    assert "The session is ended" in answer.content.decode()
    store = mcp_settings.backend("SESSION_STORE")
    assert async_to_sync(store.load)(sessions[0].id) is None
    assert async_to_sync(store.load)(sessions[1].id) is not None
    again = ender.post(URL, {"key": key_of(sessions[0].id)}, follow=True)
    assert "No live session has this key" in again.content.decode()
