"""``UpstreamConfig``: everything a worker needs to reach one upstream, read once from its row, so
the call path (``registry/upstreams/serve.py``) never touches the database; ``UpstreamTarget``:
what a mirrored row's serving spec carries (which upstream, which original name).

Here, among the serving specs (plain data importing nothing of the registry), so the specs can
carry them without a cycle; ``registry.upstreams.connect`` (and ``.config``) export them too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class UpstreamConfig:
    id: int
    name: str
    prefix: str
    url: str
    transport: str  # "auto", "streamable-http", "sse" (Upstream.Transport)
    auth: str  # "none", "header", "client_credentials", "user" (Upstream.Auth)
    auth_header: str = "Authorization"
    # The NAME of the environment variable holding the header's value or the client secret: the
    # secret itself is read when connecting, never kept in a row or a snapshot.
    auth_secret_env: str = ""
    oauth_token_url: str = ""
    oauth_client_id: str = ""
    oauth_scopes: tuple[str, ...] = ()
    timeout: float = 30.0
    connect_timeout: float = 5.0
    max_concurrency: int = 16
    # auth "user": the provider's slug whose per-user token calls send, and how the sync lists the
    # upstream meanwhile ("none", "header", "client_credentials": the fields above describe it).
    connection: str = ""
    sync_auth: str = "none"

    @property
    def per_user(self) -> bool:
        return self.auth == "user"

    @property
    def listing_auth(self) -> str:
        """The credential kind sent when no user is calling (sync, listen, a per-user session's
        absence): ``sync_auth`` for a ``user`` upstream, else ``auth``."""
        return self.sync_auth if self.auth == "user" else self.auth

    @classmethod
    def of(cls, row: Any) -> UpstreamConfig:
        """From a ``registry.models.Upstream`` row."""
        return cls(
            id=row.pk, name=row.name, prefix=row.prefix, url=row.url, transport=row.transport,
            auth=row.auth, auth_header=row.auth_header or "Authorization",
            auth_secret_env=row.auth_secret_env, oauth_token_url=row.oauth_token_url,
            oauth_client_id=row.oauth_client_id, oauth_scopes=tuple(row.oauth_scopes or ()),
            timeout=float(row.timeout), connect_timeout=float(row.connect_timeout),
            max_concurrency=int(row.max_concurrency),
            connection=row.connection or "", sync_auth=row.sync_auth or "none",
        )


@dataclass(frozen=True, slots=True)
class UpstreamTarget:
    """A mirrored tool, resource, template or prompt as served: ``name`` is the upstream's own
    (tool or prompt name, resource URI, URI template), what a call sends it."""

    config: UpstreamConfig
    name: str
    # A tool's: the upstream's own ``execution.taskSupport`` where it declared task-augmented
    # tools/call (else "forbidden"): whether a call is sent to it as a task (upstreams/tasks.py).
    task_support: str = "forbidden"
