"""The connect surface (docs/security.md "Connected services: acting for the user"), attacked
in-process: the page
checks its signed reference (another user's, another provider's, expired, forged, replayed),
its ``state`` is one-time and bound to the user who started the flow, it redirects only to the
provider's authorization URL (no parameter chooses where to go), and a provider's URLs obey the
outbound rules (no private address while ``REGISTRY_HTTP_FORBID_PRIVATE`` is on, only allowed
hosts). No request here reaches a provider: the token POST of the tests that get that far goes to
a closed loopback port, which fails cleanly (502 page, nothing stored).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth.models import User
from django.core import signing
from django.core.exceptions import ValidationError
from django.test import Client, override_settings

from connections import outbound, provider_client, reference, vault
from connections.models import ConnectAttempt, ConnectedToken, Provider
from tests.support.ports import free_port

pytestmark = pytest.mark.django_db

LOOPBACK = {"REGISTRY_HTTP_ALLOWED_HOSTS": ["127.0.0.1"], "REGISTRY_HTTP_FORBID_PRIVATE": False}


@pytest.fixture
def provider() -> Provider:
    closed = f"http://127.0.0.1:{free_port()}"
    with override_settings(**LOOPBACK):
        row = Provider(slug="tp", name="Third Party", authorization_url=f"{closed}/authorize",
                       token_url=f"{closed}/token", client_id="c1")
        row.full_clean()
        row.save()
    return row


def signed_in(name: str) -> Client:
    client = Client()
    client.force_login(User.objects.create_user(name, password="pw"))
    return client


def user_id(name: str) -> int:
    return int(User.objects.get(username=name).pk)


def start(client: Client, ref: str, slug: str = "tp") -> tuple[int, str]:
    response = client.get(f"/connect/{slug}/", {"ref": ref})
    return response.status_code, response.headers.get("Location", "")


def test_a_reference_made_for_another_user_is_refused(provider: Provider) -> None:
    alice, _ = signed_in("alice"), signed_in("mallory")
    status, _ = start(alice, reference.make(user_id("mallory"), "tp", "e1"))
    assert status == 403
    assert not ConnectAttempt.objects.exists()


def test_a_reference_for_another_provider_forged_or_expired_is_refused(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = signed_in("alice")
    assert start(alice, reference.make(user_id("alice"), "other", "e1"))[0] == 400
    assert start(alice, "not-a-reference")[0] == 400
    forged = signing.dumps({"u": user_id("alice"), "p": "tp", "e": "e1", "n": "x"}, salt="another-salt")
    assert start(alice, forged)[0] == 400
    old = reference.make(user_id("alice"), "tp", "e1")
    monkeypatch.setattr(reference, "MAX_AGE", -1)  # every reference is too old
    assert start(alice, old)[0] == 400
    assert not ConnectAttempt.objects.exists()


def test_a_reference_starts_one_flow_only(provider: Provider) -> None:
    alice = signed_in("alice")
    ref = reference.make(user_id("alice"), "tp", "e1")
    assert start(alice, ref)[0] == 302
    assert start(alice, ref)[0] == 400
    assert ConnectAttempt.objects.count() == 1


def test_the_only_redirect_is_the_providers_authorization_url(provider: Provider) -> None:
    alice = signed_in("alice")
    ref = reference.make(user_id("alice"), "tp", "e1")
    response = alice.get("/connect/tp/", {"ref": ref, "next": "https://evil.example/",
                                          "redirect_uri": "https://evil.example/cb"})
    assert response.status_code == 302
    location = urlsplit(response.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == provider.authorization_url
    query = parse_qs(location.query)
    assert query["redirect_uri"] == ["http://127.0.0.1:8000/connect/tp/callback/"]  # ours, from settings
    assert query["code_challenge_method"] == ["S256"] and query["state"][0]
    # Not signed in: the sign-in page, carrying only this path back.
    anonymous = Client().get("/connect/tp/", {"ref": ref})
    assert anonymous.status_code == 302
    assert urlsplit(anonymous.headers["Location"]).netloc == ""


def _state(client: Client) -> str:
    ref = reference.make(int(client.session["_auth_user_id"]), "tp", "e1")
    status, location = start(client, ref)
    assert status == 302
    return parse_qs(urlsplit(location).query)["state"][0]


def test_state_is_one_time_and_bound_to_the_user_who_started(provider: Provider) -> None:
    alice, mallory = signed_in("alice"), signed_in("mallory")
    state = _state(alice)
    # Another signed-in user replaying alice's callback gets nothing, and does not burn it.
    assert mallory.get("/connect/tp/callback/", {"state": state, "code": "c"}).status_code == 400
    with override_settings(**LOOPBACK):
        first = alice.get("/connect/tp/callback/", {"state": state, "code": "c"})
    assert first.status_code == 502  # the token endpoint (a closed port) failed: a page, no 500
    assert alice.get("/connect/tp/callback/", {"state": state, "code": "c"}).status_code == 400  # replay
    assert alice.get("/connect/tp/callback/", {"state": "made-up", "code": "c"}).status_code == 400
    assert not ConnectedToken.objects.exists()


def test_a_provider_error_answer_is_a_page_not_a_500(provider: Provider) -> None:
    alice = signed_in("alice")
    state = _state(alice)
    response = alice.get("/connect/tp/callback/", {"state": state, "error": "access_denied"})
    assert response.status_code == 400 and b"access_denied" in response.content


@pytest.mark.parametrize("url", ["http://127.0.0.1/token", "http://10.0.0.5/token",
                                 "http://169.254.169.254/", "https://[::1]/token"])
def test_a_provider_url_to_a_private_address_is_refused(url: str) -> None:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["*"], REGISTRY_HTTP_FORBID_PRIVATE=True):
        row = Provider(slug="p", name="P", authorization_url="https://idp.example/authorize",
                       token_url=url, client_id="c")
        with pytest.raises(ValidationError) as refused:
            row.full_clean()
        assert "token_url" in refused.value.message_dict
        # And at use time, for a row written around validation:
        with pytest.raises(outbound.Refused):
            outbound.post_form(url, {"grant_type": "refresh_token"})


def test_a_provider_url_off_the_allow_list_is_refused() -> None:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["api.example.com"]):
        row = Provider(slug="p", name="P", authorization_url="https://evil.example/authorize",
                       token_url="https://api.example.com/token", client_id="c")
        with pytest.raises(ValidationError) as refused:
            row.full_clean()
        assert list(refused.value.message_dict) == ["authorization_url"]


def test_a_client_secret_variable_outside_the_allowed_rule_is_refused() -> None:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["*"]):
        row = Provider(slug="p", name="P", authorization_url="https://idp.example/a",
                       token_url="https://idp.example/t", client_id="c", client_secret_env="SECRET_KEY")
        with pytest.raises(ValidationError) as refused:
            row.full_clean()
        assert list(refused.value.message_dict) == ["client_secret_env"]


def test_services_page_revokes_only_the_users_own_accounts(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONNECTIONS_VAULT_KEYS", Fernet.generate_key().decode())
    alice, mallory = signed_in("alice"), signed_in("mallory")
    vault.store(user_id("alice"), provider, provider_client.Tokens("at-alice", "rt-alice", None, ""))
    theirs = ConnectedToken.objects.get()
    mallory.post("/connect/services/", {"token": str(theirs.pk)})
    assert ConnectedToken.objects.filter(pk=theirs.pk).exists()
    assert b"Third Party" in alice.get("/connect/services/").content
    assert b"at-alice" not in alice.get("/connect/services/").content
