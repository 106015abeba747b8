"""A 403 is not a 401 (RFC 6750 §3.1): the ``WWW-Authenticate`` Bearer challenge read
(``registry/kinds/http_client/challenge.py``), and an upstream called with a *shared* credential
(a static ``Authorization`` header) that answers 403: one request, no new token, no retry, the
upstream's reason in the failure, the breaker counting it as an answer and the session kept.
Against the loopback third party and the upstream that checks each request's token there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from registry.kinds.http_client.challenge import bearer_params, forbidden
from registry.upstreams.calls import UpstreamFailure, run
from registry.upstreams.config import UpstreamConfig
from registry.upstreams.pool import UpstreamSessions
from registry.upstreams.relay import Relay
from tests.support.third_party import ThirdParty
from tests.support.user_upstream_process import UserUpstreamProcess

pytestmark = pytest.mark.timeout(60)
SECRET_ENV = "MCP_TOOL_SECRET_SHARED_UPSTREAM"


def test_the_bearer_challenge_is_read_among_others() -> None:
    header = ('Basic realm="a", Bearer realm="api", error="insufficient_scope", '
              'scope="read write", error_description="needs \\"write\\"", Digest realm="b"')
    assert bearer_params(header) == {"realm": "api", "error": "insufficient_scope", "scope": "read write",
                                     "error_description": 'needs "write"'}
    assert bearer_params("bearer error=invalid_token") == {"error": "invalid_token"}
    assert bearer_params('Basic realm="a"') == {}


def test_a_403_is_read_as_a_scope_challenge_or_a_plain_refusal() -> None:
    scoped = forbidden('Bearer error="insufficient_scope", scope="write"',
                       '{"error": "insufficient_scope", "error_description": "write is needed"}',
                       "application/json")
    assert scoped.insufficient_scope and scoped.scope == "write" and scoped.reason == "write is needed"
    assert "needs the scope 'write'" in scoped.explain("svc", "ask the operator")
    assert scoped.explain("svc", "ask the operator").endswith("; ask the operator")
    plain = forbidden("", '{"message": "no access for you"}', "application/json")
    assert not plain.insufficient_scope and plain.reason == "no access for you"
    assert plain.explain("svc") == "svc refused access (HTTP 403): no access for you"
    # A challenge with another error code is a plain 403: only insufficient_scope names a scope.
    other = forbidden('Bearer error="invalid_token", scope="x"', "", "")
    assert other.scope is None and other.reason == "no reason given"


@pytest.fixture(scope="module")
def third_party() -> Iterator[ThirdParty]:
    with ThirdParty() as service:
        yield service


@pytest.fixture(scope="module")
def checking(third_party: ThirdParty) -> Iterator[UserUpstreamProcess]:
    with UserUpstreamProcess(third_party.url()) as running:
        yield running


async def _call(sessions: UpstreamSessions, config: UpstreamConfig, tool: str) -> dict[str, Any]:
    result = await run(sessions, config, "tools/call", tool, {"name": tool, "arguments": {}}, Relay(None))
    found: dict[str, Any] = result["structuredContent"]
    return found


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"], REGISTRY_UPSTREAM_BREAKER_FAILURES=2)
async def test_a_shared_credential_answered_403_is_one_request_and_the_upstreams_answer(
    third_party: ThirdParty, checking: UserUpstreamProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(os.environ, SECRET_ENV, f"Bearer {third_party.token_for('shared-account')}")
    config = UpstreamConfig(id=7, name="shared", prefix="shared", url=checking.url,
                            transport="streamable-http", auth="header", auth_secret_env=SECRET_ENV,
                            timeout=5.0)
    sessions = UpstreamSessions()
    sessions.open()
    try:
        before = await _call(sessions, config, "whoami")
        assert before["user"] == "shared-account"
        posts = (await _call(sessions, config, "seen"))["forbidden"]
        third_party.control("forbid", user="shared-account")
        try:
            for _ in range(3):  # past the breaker's threshold of 2, were a 403 a failure
                with pytest.raises(UpstreamFailure) as failed:
                    await _call(sessions, config, "whoami")
                said = failed.value.message
                assert "HTTP 403" in said and "shared-account has no access to this API" in said, said
                assert failed.value.refusal is not None and not failed.value.refusal.insufficient_scope
            breaker = sessions.get(config).breaker
            assert breaker.state == "closed" and breaker.failures == 0, "a 403 is an answer, not a failure"
        finally:
            third_party.control("allow", user="shared-account")
        # POSTs the upstream answered 403 (not its GET stream's, refused in the background too).
        forbidden = (await _call(sessions, config, "seen"))["forbidden"]
        assert forbidden == posts + 3, f"one request per call, no retry ({forbidden - posts})"
        after = await _call(sessions, config, "whoami")
        assert after == before, "the same credential and session work once the upstream allows them"
    finally:
        await sessions.close()
