"""Redis down under the built-in authorization server and the management API (issue 38 item 5):
the token endpoint's rate limiter and DRF's throttles count in Django's cache, which is Redis with
``REDIS_URL``. With Redis killed both answer as ``/mcp`` does for its store: 503 with a JSON body
the client can read and ``Retry-After``, never a 500 page. Nothing is spent or lost: the code and
the refresh token sent during the outage work once Redis is back, with no restart. The sign-in
pages, which count password guesses there too, let no guess through uncounted: 503, then sign-in
works again. A frozen Redis (SIGSTOP) holds a request no longer than redis-py's socket timeout,
then it is the same 503.

A real server process on a private redis-server (stopped with SHUTDOWN NOSAVE, started again
empty on the same port), real tokens from the real flow (``tests/support/oauth_flow.py``).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.support import LiveServer
from tests.support.live_server import REGISTRY_PROVIDER
from tests.support.oauth_flow import PKCE, OAuthFlow, user
from tests.support.polling import wait_until
from tests.support.ports import free_port
from tests.support.private_redis import PrivateRedis, have_redis_server

pytestmark = pytest.mark.skipif(not have_redis_server(), reason="needs redis-server")

REDIRECT = "http://127.0.0.1:9/cb"


# One private Redis and one server for the module's tests (their start-up, a migrated database,
# ``load_demo`` and a user, was most of each test's time). The tests do not interfere: each makes
# its own client, tokens and management token, and each leaves Redis running and the server
# serving again (what it proves); ``redis_running`` restarts a Redis a failed test left down.
@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path_factory.mktemp("outage") / "redis").start()
    try:
        yield server
    finally:
        if server.ping():
            server.stop()


@pytest.fixture(scope="module")
def live(redis_server: PrivateRedis) -> Iterator[LiveServer]:
    port = free_port()
    env = {
        "REDIS_URL": redis_server.url,
        "MCP_AUTH": "oauth",
        "MCP_OAUTH_ISSUER": "self",
        "MCP_RESOURCE_URL": f"http://127.0.0.1:{port}/mcp",
    }
    server = LiveServer(env=env, port=port, provider=REGISTRY_PROVIDER, load="load_demo").start()
    try:
        user(server.manage, "alice", "alice-password-1")
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def redis_running(redis_server: PrivateRedis) -> Iterator[None]:
    """Each test starts with the module's Redis up (empty after a restart, as the tests expect)."""
    if not redis_server.ping():
        redis_server.start()
    yield


def management_token(live: LiveServer) -> str:
    return live.manage(
        "shell",
        "-c",
        (
            "from django.contrib.auth.models import User; "
            "from management_api.tokens import ManagementToken; "
            "u = User.objects.create_superuser('root', password='root-password-1'); "
            "print(ManagementToken.issue(u, 'outage')[1])"
        ),
    ).split()[-1]


def assert_unavailable(response: httpx.Response) -> dict[str, object]:
    assert response.status_code == 503, response.text[:500]
    assert response.headers["content-type"].startswith("application/json")
    assert int(response.headers["retry-after"]) >= 1
    body = response.json()
    assert isinstance(body, dict)
    return body


def test_the_token_endpoint_and_sign_in_answer_503_during_a_redis_outage_and_spend_nothing(
    live: LiveServer, redis_server: PrivateRedis
) -> None:
    flow = OAuthFlow(live.base_url, "alice", "alice-password-1")
    try:
        tokens = flow.access_token()
        client = flow.register([REDIRECT])
        pkce = PKCE.new()
        code = flow.authorize(client, pkce, REDIRECT).code
        exchange = {
            "grant_type": "authorization_code",
            "code": code,
            "client_id": client,
            "redirect_uri": REDIRECT,
            "code_verifier": pkce.verifier,
            "resource": flow.resource,
        }
        refresh = {
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": tokens["client_id"],
        }

        signing_in = httpx.Client(base_url=live.base_url, timeout=10.0)
        signing_in.get("/oauth/login/")
        credentials = {"username": "alice", "password": "alice-password-1"}

        redis_server.stop()
        for form in (exchange, refresh):
            body = assert_unavailable(flow.token(**form))
            assert body["error"] == "temporarily_unavailable"  # RFC 6749 §5.2's shape
        # The sign-in page cannot count guesses: it lets none through, and says so.
        paused = signing_in.post(
            "/oauth/login/", data={**credentials, "csrfmiddlewaretoken": signing_in.cookies["csrftoken"]}
        )
        assert paused.status_code == 503 and int(paused.headers["retry-after"]) >= 1
        assert "try again shortly" in paused.text
        assert "Traceback" not in live.log_text()

        redis_server.start()  # empty, as after a crash
        probe = {**refresh, "refresh_token": "not-a-token"}
        wait_until("the token endpoint back", lambda: flow.token(**probe).status_code == 400, 15)
        exchanged = flow.token(**exchange)  # the code sent during the outage, unspent
        assert exchanged.status_code == 200, exchanged.text
        refreshed = flow.token(**refresh)
        assert refreshed.status_code == 200, refreshed.text
        assert refreshed.json()["refresh_token"] != tokens["refresh_token"]
        signed_in = signing_in.post(
            "/oauth/login/", data={**credentials, "csrfmiddlewaretoken": signing_in.cookies["csrftoken"]}
        )
        assert signed_in.status_code == 302
        signing_in.close()
    finally:
        flow.close()


def test_the_management_api_answers_503_during_a_redis_outage(
    live: LiveServer, redis_server: PrivateRedis
) -> None:
    headers = {"authorization": f"Bearer {management_token(live)}"}
    tools = f"{live.base_url}/api/v1/tools/"
    assert httpx.get(tools, headers=headers).status_code == 200

    redis_server.stop()
    body = assert_unavailable(httpx.get(tools, headers=headers))
    assert "unreachable" in str(body["detail"])

    redis_server.start()
    wait_until("the API back", lambda: httpx.get(tools, headers=headers).status_code == 200, 15)


def test_a_frozen_redis_holds_the_token_endpoint_no_longer_than_its_socket_timeout(
    live: LiveServer, redis_server: PrivateRedis
) -> None:
    flow = OAuthFlow(live.base_url, "alice", "alice-password-1")
    try:
        tokens = flow.access_token()
        refresh = {
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": tokens["client_id"],
        }
        pid = int((redis_server.directory / "redis.pid").read_text())
        os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with httpx.Client(timeout=30.0) as client:
                frozen = client.post(f"{live.base_url}/oauth/token/", data=refresh)
            waited = time.monotonic() - started
        finally:
            os.kill(pid, signal.SIGCONT)
        assert_unavailable(frozen)
        assert waited < 10.0, f"answered after {waited:.1f} s"  # redis-py 8's default 5 s socket timeout
        refreshed = flow.token(**refresh)  # unspent
        assert refreshed.status_code == 200, refreshed.text
    finally:
        flow.close()
