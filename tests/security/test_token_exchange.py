"""The token exchange grant (RFC 8693, issue 42 item 4) as a surface: who may exchange, what may
be exchanged, and what an exchanged token can reach (docs/security.md, "Token exchange").

Against a real server on loopback (``tests/support/exchange_site.py``): a confidential client
not named in ``MCP_OAUTH_EXCHANGE_CLIENTS`` gets ``unauthorized_client``; a wrong secret or a
public client, ``invalid_client``; a token issued by an exchange cannot be exchanged again (so no
hop widens what the user granted) nor used on ``/mcp``; no scope beyond the subject's and the
target's; malformed requests are 400s with the RFC's error codes, never a 500; refusals are
audited with the client, never the token. And the caller's token kept for the request cannot be
printed, pickled, or read by another principal.
"""

from __future__ import annotations

import base64
import json
import pickle
from collections.abc import Iterator

import httpx
import pytest

from mcp_protocol.auth.principal import Principal, present, presented, withdraw
from tests.support import LiveServer
from tests.support.admin_client import log_in
from tests.support.exchange_site import (
    ACCESS,
    EXCHANGER,
    OTHER,
    OTHER_SECRET,
    STAFF,
    STAFF_PASSWORD,
    claims,
    exchange,
    start,
    user_token,
)
from tests.support.jwt_api import JwtApi
from tests.support.manage import ManageSession

pytestmark = [pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[LiveServer, JwtApi]]:
    server, api = start()
    try:
        yield server, api
    finally:
        server.stop()
        api.stop()


@pytest.fixture(scope="module")
def live(site: tuple[LiveServer, JwtApi]) -> LiveServer:
    return site[0]


@pytest.fixture(scope="module")
def target(site: tuple[LiveServer, JwtApi]) -> str:
    return site[1].resource


@pytest.fixture(scope="module")
def manage(live: LiveServer) -> Iterator[ManageSession]:
    """The module's management commands against ``live``'s database, in one Django process (one
    start-up, not one per command)."""
    with ManageSession(live.env, inherit=False) as session:
        yield session


@pytest.fixture(scope="module")
def alice(live: LiveServer) -> dict[str, str]:
    return user_token(live, "alice")


def error_of(answer: httpx.Response) -> tuple[int, str]:
    return answer.status_code, str(answer.json().get("error"))


def test_a_confidential_client_not_named_may_not_exchange(live: LiveServer, alice: dict[str, str],
                                                          target: str) -> None:
    answer = exchange(live, alice["access_token"], client=(OTHER, OTHER_SECRET), resource=target)
    assert error_of(answer) == (400, "unauthorized_client")


def test_a_wrong_secret_or_a_public_client_is_invalid_client(live: LiveServer, alice: dict[str, str],
                                                             target: str) -> None:
    wrong = exchange(live, alice["access_token"], client=(EXCHANGER, "not-the-secret"), resource=target)
    assert error_of(wrong) == (401, "invalid_client")
    # The user's own (public, DCR) client: nothing to authenticate it with.
    public = httpx.post(f"{live.base_url}/oauth/token/", timeout=10.0, data={
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "client_id": alice["client_id"],
        "subject_token": alice["access_token"], "subject_token_type": ACCESS, "resource": target})
    assert error_of(public) == (401, "invalid_client")


def test_an_exchanged_token_cannot_be_exchanged_again_or_used_on_mcp(live: LiveServer,
                                                                     alice: dict[str, str],
                                                                     target: str) -> None:
    first = exchange(live, alice["access_token"], resource=target)
    assert first.status_code == 200, first.text
    hop = first.json()["access_token"]
    for scope in ("mcp", "mcp extra"):
        again = exchange(live, hop, resource=target, scope=scope)
        assert error_of(again) == (400, "invalid_grant"), again.text
    answer = httpx.post(live.url, headers={"Authorization": f"Bearer {hop}", "Accept":
                                           "application/json, text/event-stream"},
                        json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10.0)
    assert answer.status_code == 401  # its audience is the upstream, not /mcp


def test_no_scope_beyond_the_subjects_and_the_targets(live: LiveServer, alice: dict[str, str],
                                                      target: str) -> None:
    # alice consented to "mcp" only; the target allows "mcp extra": "extra" is not hers to pass on.
    wider = exchange(live, alice["access_token"], resource=target, scope="extra")
    assert error_of(wider) == (400, "invalid_scope")
    unknown = exchange(live, alice["access_token"], resource=target, scope="admin")
    assert error_of(unknown) == (400, "invalid_scope")
    issued = exchange(live, alice["access_token"], resource=target).json()["access_token"]
    assert claims(issued)["scope"] == "mcp"


def _unsigned(claims_: dict[str, object]) -> str:
    def part(value: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'at+jwt', 'kid': 'x'})}.{part(claims_)}."


@pytest.mark.parametrize("subject", [
    "not-a-token", "a.b.c", "x" * 100_000, "\u00e9\u00e9\u00e9",
])
def test_a_malformed_subject_token_is_invalid_grant(live: LiveServer, target: str, subject: str) -> None:
    answer = exchange(live, subject, resource=target)
    assert error_of(answer) == (400, "invalid_grant")


def test_a_forged_or_foreign_subject_token_is_invalid_grant(live: LiveServer, alice: dict[str, str],
                                                            target: str) -> None:
    forged = _unsigned({**claims(alice["access_token"]), "sub": "1"})  # alg none
    assert error_of(exchange(live, forged, resource=target)) == (400, "invalid_grant")
    header, _, signature = alice["access_token"].split(".")
    bob_claims = {**claims(alice["access_token"]), "sub": "999"}
    swapped = base64.urlsafe_b64encode(json.dumps(bob_claims).encode()).rstrip(b"=").decode()
    tampered = f"{header}.{swapped}.{signature}"
    assert error_of(exchange(live, tampered, resource=target)) == (400, "invalid_grant")


@pytest.mark.parametrize("form", [
    {"subject_token_type": "urn:ietf:params:oauth:token-type:id_token"},
    {"requested_token_type": "urn:ietf:params:oauth:token-type:refresh_token"},
    {"actor_token": "anything", "actor_token_type": ACCESS},
    {"subject_token": ""},
])
def test_requests_outside_the_grant_are_invalid_request(live: LiveServer, alice: dict[str, str],
                                                        target: str, form: dict[str, str]) -> None:
    answer = exchange(live, alice["access_token"], resource=target, **form)
    assert error_of(answer) == (400, "invalid_request"), answer.text


def _repeating(live: LiveServer, body: list[tuple[str, str]]) -> httpx.Response:
    return httpx.post(f"{live.base_url}/oauth/token/", content=str(httpx.QueryParams(body)),
                      headers={"Content-Type": "application/x-www-form-urlencoded"},
                      auth=(EXCHANGER, "exchanger-secret-1"), timeout=10.0)


def test_a_repeated_parameter_is_refused_not_flattened(live: LiveServer, alice: dict[str, str],
                                                       target: str) -> None:
    # The toolkit keeps the last of repeated values: the second subject token (or audience) must
    # not silently replace the first.
    base = [("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
            ("subject_token_type", ACCESS)]
    twice = _repeating(live, [*base, ("subject_token", alice["access_token"]), ("subject_token", "other"),
                              ("resource", target)])
    assert error_of(twice) == (400, "invalid_request")
    audiences = _repeating(live, [*base, ("subject_token", alice["access_token"]), ("audience", "elsewhere"),
                                  ("audience", "api")])
    assert error_of(audiences) == (400, "invalid_target")


def test_two_targets_at_once_and_a_disabled_target_are_invalid_target(live: LiveServer,
                                                                       manage: ManageSession,
                                                                       alice: dict[str, str],
                                                                       target: str) -> None:
    both = exchange(live, alice["access_token"], resource=target, audience="elsewhere")
    assert error_of(both) == (400, "invalid_target")
    manage("shell", "-c", "from oauth_server.models import ExchangeTarget; "
           "ExchangeTarget.objects.update(enabled=False)")
    try:
        assert error_of(exchange(live, alice["access_token"], resource=target)) == (400, "invalid_target")
    finally:
        manage("shell", "-c", "from oauth_server.models import ExchangeTarget; "
               "ExchangeTarget.objects.update(enabled=True)")


def test_a_deactivated_users_token_is_refused(live: LiveServer, manage: ManageSession, target: str) -> None:
    bob = user_token(live, "bob")
    manage("shell", "-c", "from django.contrib.auth.models import User; "
           "User.objects.filter(username='bob').update(is_active=False)")  # no signal: the check itself
    answer = exchange(live, bob["access_token"], resource=target)
    assert error_of(answer) == (400, "invalid_grant")


async def test_refusals_are_audited_with_the_client_never_the_token(live: LiveServer,
                                                                    alice: dict[str, str],
                                                                    target: str) -> None:
    exchange(live, alice["access_token"], client=(OTHER, OTHER_SECRET), resource=target)
    async with httpx.AsyncClient(base_url=live.base_url, timeout=10.0) as staff:
        await log_in(staff, live.base_url, STAFF, STAFF_PASSWORD)
        page = (await staff.get("/admin/oauth_server/oauthevent/", params={"kind": "exchange_refused"})).text
    assert OTHER in page and "unauthorized_client" in page
    assert alice["access_token"] not in page and alice["access_token"] not in live.log_text()


def test_the_presented_token_is_never_printed_pickled_or_lent() -> None:
    who = Principal("oauth:https://as.example 1")
    held = present(who, "secret-access-token")
    try:
        assert presented(who.id) == "secret-access-token"
        assert presented("oauth:https://as.example 2") is None and presented(None) is None
        from mcp_protocol.auth import principal as module

        box = module._presented.get()
        assert box is not None and "secret-access-token" not in repr(box)
        with pytest.raises(TypeError):
            pickle.dumps(box)
    finally:
        withdraw(held)
    assert presented(who.id) is None
