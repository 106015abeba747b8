"""One refresh in flight per token across workers (issue 42 item 3, connections/vault.py): four
processes on one PostgreSQL database find the same token due at the same moment; the row lock
(``SELECT ... FOR UPDATE``) lets one refresh it at the real third-party service
(``tests/support/third_party.py``) while the others wait and then use the token it stored.

The processes are released together through their stdin once each has set Django up, so they
reach the lock within milliseconds of one another. Skipped without PostgreSQL on 127.0.0.1:5432.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from cryptography.fernet import Fernet

from tests.support.migrated import postgres_copy
from tests.support.postgres import temporary_database
from tests.support.third_party import CLIENT_ID, CLIENT_SECRET, ThirdParty

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[2]
WORKERS = 4

SEED = """
import json, sys, time
import django; django.setup()
from django.contrib.auth.models import User
from connections import provider_client, vault
from connections.models import Provider
tp, access, refresh = sys.argv[1:4]
user = User.objects.create_user("alice")
provider = Provider.objects.create(slug="tp", name="TP", authorization_url=tp + "/authorize",
    token_url=tp + "/token", client_id="{client_id}", client_secret_env="MCP_TOOL_SECRET_THIRD_PARTY")
vault.store(user.pk, provider, provider_client.Tokens(access, refresh, time.time() + 1))
print(json.dumps([user.pk, provider.pk]))
"""
REFRESH = """
import sys
import django; django.setup()
from connections import vault
user_id, provider_id = int(sys.argv[1]), int(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()  # released with the others
print(vault._refresh(user_id, provider_id), flush=True)
"""


@pytest.fixture(scope="module")
def third_party() -> Iterator[ThirdParty]:
    with ThirdParty() as service:
        yield service


def tokens_from(service: ThirdParty) -> tuple[str, str]:
    """A real grant at the provider: authorize (its user by header), then the code exchange."""
    verifier = "v" * 50
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    redirect = "http://127.0.0.1:9/cb"
    answer = httpx.get(service.url("/authorize"), headers={"X-Provider-User": "alice-at-tp"}, params={
        "client_id": CLIENT_ID, "redirect_uri": redirect, "state": "s", "code_challenge": challenge,
        "code_challenge_method": "S256"})
    code = parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]
    tokens = httpx.post(service.url("/token"), data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "code_verifier": verifier,
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}).json()
    return tokens["access_token"], tokens["refresh_token"]


def test_workers_finding_one_token_due_refresh_it_once(third_party: ThirdParty) -> None:
    with temporary_database("mcpsite_refresh") as url:
        postgres_copy(url)
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "mcpsite.settings", "DATABASE_URL": url,
               "REDIS_URL": "", "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1",
               "CONNECTIONS_VAULT_KEYS": Fernet.generate_key().decode(),
               "MCP_TOOL_SECRET_THIRD_PARTY": CLIENT_SECRET, "PYTHONPATH": str(ROOT)}
        access, refresh = tokens_from(third_party)
        seed = [sys.executable, "-c", SEED.format(client_id=CLIENT_ID), third_party.url(), access, refresh]
        seeded = subprocess.run(seed, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert seeded.returncode == 0, seeded.stderr[-3000:]
        user_id, provider_id = json.loads(seeded.stdout.strip().splitlines()[-1])
        before = third_party.stats()["refreshes"]
        workers = [subprocess.Popen([sys.executable, "-c", REFRESH, str(user_id), str(provider_id)], env=env,
                                    cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                   for _ in range(WORKERS)]
        try:
            for worker in workers:
                assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
            for worker in workers:
                assert worker.stdin is not None
                worker.stdin.write("go\n")
                worker.stdin.flush()
            got = [worker.communicate(timeout=60)[0].strip() for worker in workers]
        finally:
            for worker in workers:
                if worker.poll() is None:
                    worker.kill()
        assert third_party.stats()["refreshes"] == before + 1
        assert len(set(got)) == 1 and got[0].startswith("tp-at-") and got[0] != access
