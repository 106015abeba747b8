"""``manage.py rotate_vault_keys``: encrypt every stored token again with the first key of
``CONNECTIONS_VAULT_KEYS`` (connections/cipher.py), so the keys after it can be retired."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ...cipher import VaultLocked
from ...vault import reseal_all


class Command(BaseCommand):
    help = "Re-encrypt every connected account's tokens with the first key of CONNECTIONS_VAULT_KEYS."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            count = reseal_all()
        except VaultLocked as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"re-encrypted {count} connected account(s) with the first key")
