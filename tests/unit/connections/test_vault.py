"""The vault at rest and on the call path: keys rotate without downtime (MultiFernet), a stored
token is ciphertext, a call after the first reads no database row, and a revoked token is gone
for the next call at once."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from cryptography.fernet import Fernet
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from connections import cipher, provider_client, vault
from connections.models import ConnectedToken, Provider

pytestmark = pytest.mark.django_db


@pytest.fixture
def provider() -> Provider:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["idp.example"]):
        row = Provider(slug="tp", name="TP", authorization_url="https://idp.example/a",
                       token_url="https://idp.example/t", client_id="c")
        row.full_clean()
        row.save()
    return row


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    cache.clear()


def test_rotation_new_key_first_old_tokens_still_read_then_resealed(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    user = User.objects.create_user("alice")
    monkeypatch.setenv(cipher.VARIABLE, old)
    vault.store(user.pk, provider, provider_client.Tokens("at-secret-1", "rt-secret-1"))
    sealed = bytes(ConnectedToken.objects.get().sealed)
    assert b"at-secret-1" not in sealed and b"rt-secret-1" not in sealed

    monkeypatch.setenv(cipher.VARIABLE, f"{new},{old}")  # every worker gets both; new encrypts
    cache.clear()
    assert async_to_sync(vault.access_token)(user.pk, provider.pk) == "at-secret-1"
    call_command("rotate_vault_keys")

    monkeypatch.setenv(cipher.VARIABLE, new)  # the old key retired
    cache.clear()
    assert async_to_sync(vault.access_token)(user.pk, provider.pk) == "at-secret-1"


def test_a_wrong_key_is_a_clear_error_not_a_crash(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = User.objects.create_user("alice")
    monkeypatch.setenv(cipher.VARIABLE, Fernet.generate_key().decode())
    vault.store(user.pk, provider, provider_client.Tokens("at-secret-1"))
    monkeypatch.setenv(cipher.VARIABLE, Fernet.generate_key().decode())
    cache.clear()
    with pytest.raises(cipher.VaultLocked, match="cannot be decrypted"):
        async_to_sync(vault.access_token)(user.pk, provider.pk)
    monkeypatch.setenv(cipher.VARIABLE, "not-a-key")
    with pytest.raises(cipher.VaultLocked, match="Fernet keys"):
        cipher.cipher()


def test_the_call_path_reads_the_cache_not_the_database(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cipher.VARIABLE, Fernet.generate_key().decode())
    user = User.objects.create_user("alice")
    vault.store(user.pk, provider, provider_client.Tokens("at-secret-1"))
    assert async_to_sync(vault.access_token)(user.pk, provider.pk) == "at-secret-1"  # fills the cache
    with CaptureQueriesContext(connection) as queries:
        assert async_to_sync(vault.access_token)(user.pk, provider.pk) == "at-secret-1"
        assert vault.provider_info("tp") == {"id": provider.pk, "name": "TP", "enabled": True,
                                            "kind": "authorization_code"}
        assert vault.provider_info("tp") is not None
    assert [q["sql"] for q in queries.captured_queries if "connections_provider" in q["sql"]][1:] == []
    assert not [q for q in queries.captured_queries if "connectedtoken" in q["sql"]]


def test_revoked_is_gone_for_the_next_call(provider: Provider, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cipher.VARIABLE, Fernet.generate_key().decode())
    user = User.objects.create_user("alice")
    vault.store(user.pk, provider, provider_client.Tokens("at-secret-1"))
    assert async_to_sync(vault.access_token)(user.pk, provider.pk) == "at-secret-1"
    vault.revoke(ConnectedToken.objects.get())  # no revocation URL: nothing is sent
    assert async_to_sync(vault.access_token)(user.pk, provider.pk) is None


def test_tokens_never_show_in_their_repr() -> None:
    tokens = provider_client.Tokens("at-secret-1", "rt-secret-1", 5.0, "s")
    assert "secret" not in repr(tokens) and "secret" not in str(tokens)


def test_a_refused_token_without_refresh_is_forgotten_and_a_replaced_one_kept(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The service answered 401 (vault.invalidate): a token that cannot be refreshed is dropped,
    # so the next call asks to connect again; a late 401 for a token already replaced (the user
    # reconnected, another worker refreshed) leaves the new one alone.
    monkeypatch.setenv(cipher.VARIABLE, Fernet.generate_key().decode())
    user = User.objects.create_user("alice")
    vault.store(user.pk, provider, provider_client.Tokens("at-old"))
    assert async_to_sync(vault.access_token)(user.pk, provider.pk) == "at-old"  # cached now
    vault.store(user.pk, provider, provider_client.Tokens("at-new"))
    async_to_sync(vault.invalidate)(user.pk, provider.pk, "at-old")
    assert async_to_sync(vault.access_token)(user.pk, provider.pk) == "at-new"
    async_to_sync(vault.invalidate)(user.pk, provider.pk, "at-new")
    assert not ConnectedToken.objects.exists()
    assert async_to_sync(vault.access_token)(user.pk, provider.pk) is None
