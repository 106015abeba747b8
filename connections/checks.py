"""``connections.E001``: providers are configured but the vault has no usable key in the
environment (``CONNECTIONS_VAULT_KEYS``): every connect would fail. Checked at deploy
(``check --deploy``) and start-up, without touching the database when there is no key problem."""

from __future__ import annotations

from typing import Any

from django.core import checks

from . import cipher


@checks.register(checks.Tags.security)
def vault_keys(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    import os

    if not os.environ.get(cipher.VARIABLE, "").strip():
        return []  # no key: fine until a provider is used (the connect page and calls say so)
    try:
        cipher.cipher()
    except cipher.VaultLocked as exc:
        return [checks.Error(str(exc), id="connections.E001")]
    return []
