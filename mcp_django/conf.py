"""``mcp_settings``: the ``MCP`` Django setting, merged over defaults, with backends built lazily.

Shaped like DRF's ``api_settings``: attribute access reads the merged dict; backends
(``SESSION_STORE``, ``EVENT_STORE``, ``TASK_STORE``, ``BUS``, ``PROVIDER``) are ``{"BACKEND": dotted path,
"OPTIONS": {...}}`` built once per process and dropped on ``setting_changed`` so tests can switch
memory ↔ Redis. ``DEFAULTS`` is the one place the defaults of the ``MCP`` setting are written
(``ACCESS``'s included); the project's settings set a key only when its environment variable is
there. The protocol core (``mcp_protocol``) reads no settings: this module and ``service.py`` build
what it takes as arguments. Importing it imports nothing of the core (system checks and the apps'
signal handlers read it in every ``manage.py`` command).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

if TYPE_CHECKING:
    from mcp_protocol.approvals import Approvals
    from mcp_protocol.provider import Provider
    from mcp_protocol.server import Server

DEFAULTS: dict[str, Any] = {
    "PROVIDER": {"BACKEND": "mcp_protocol.memory_provider.MemoryProvider", "OPTIONS": {}},
    "SESSION_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemorySessionStore", "OPTIONS": {}},
    "EVENT_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemoryEventStore", "OPTIONS": {}},
    "BUS": {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}},
    # Tasks (io.modelcontextprotocol/tasks; 2025-11-25 tasks): where they are kept (Redis: every
    # worker answers for every task, and a task outlives the worker running it).
    "TASK_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemoryTaskStore", "OPTIONS": {}},
    "MAX_TASKS_PER_PRINCIPAL": 1000,  # unfinished tasks of one principal at once; None: no cap
    # Finished tasks (with their results) kept per principal; past it the oldest finished go first.
    "MAX_FINISHED_TASKS_PER_PRINCIPAL": 1000,
    "TASK_LEASE_SECONDS": 10.0,  # a dead worker's tasks are taken over or failed within ~2x this
    "TASK_TTL_MS": 3_600_000,  # how long a task is kept after its creation (ttlMs); None: forever
    "TASK_POLL_INTERVAL_MS": 500,  # the pollIntervalMs suggested to clients
    "TASK_IMMEDIATE_SECONDS": 0.1,  # a call done sooner is answered at once, not as a task
    "SERVER_NAME": "mcpsite",
    "SERVER_TITLE": "mcpsite",
    "SERVER_VERSION": "0.1.0",
    "INSTRUCTIONS": None,
    # What /mcp (and /sse) serves (virtual servers, docs/reference/endpoint.md): None, the
    # catch-all (every definition); a slug, that virtual server; "off", nothing (404).
    "DEFAULT_SERVER": None,
    # Tool search on the catch-all /mcp (docs/guides/tool-search.md): "off" lists every tool; "on"
    # lists search_tools, call_tool and the pinned tools; "auto": on above TOOL_SEARCH_THRESHOLD
    # tools in the caller's view. A virtual server has its own (its admin page).
    "TOOL_SEARCH": "off",
    "TOOL_SEARCH_THRESHOLD": 50,
    # How search_tools ranks (mcp_protocol/search/): "default" (BM25, stems, related words),
    # "plain" (BM25 alone), "embedding" (with a small sentence model: the search-embedding extra).
    "TOOL_SEARCH_RANKING": "default",
    # SEP-2564 (draft): tools/list takes filter.namePatterns and says so in its capabilities.
    "TOOLS_LIST_FILTER": False,
    # Approval before risky calls (docs/guides/approvals.md): the staff approval queue (dotted path
    # of an mcp_protocol.approvals.ApprovalQueue taking the bus; None: staff-approved tools are
    # refused) and how long a call waits for a decision.
    "APPROVAL_QUEUE": "access.approvals.DatabaseApprovalQueue",
    "APPROVAL_TIMEOUT_SECONDS": 300.0,
    "SESSION_TTL": 1800.0,
    "MAX_SESSIONS": 10000,
    "MAX_SESSIONS_PER_PRINCIPAL": 1000,
    "ALLOWED_ORIGINS": [],
    "ALLOWED_HOSTS": [],
    "MAX_BODY_BYTES": 4 * 1024 * 1024,
    "KEEPALIVE_SECONDS": 15.0,
    "ALWAYS_STREAM": False,
    "SSE_RETRY_MS": 1000,
    "CLOSE_STREAM_AFTER_SECONDS": None,
    "CLIENT_REQUEST_TIMEOUT": 60.0,
    "SHUTDOWN_GRACE_SECONDS": 10.0,
    "PAGE_SIZE": 100,
    "CURSOR_SECRET": None,
    # Who may call what (docs/guides/auth.md): the user's dict is merged over ACCESS_DEFAULTS.
    "ACCESS": {},
    # requestState (MRTR) key ring: the first key signs, every key opens (rotation). Empty: one key
    # derived from SECRET_KEY. Every worker must hold the same ring.
    "REQUEST_STATE_KEYS": [],
    "REQUEST_STATE_TTL": 900.0,
    # Who is calling /mcp (transports/http.py PrincipalResolver): open mode unless set; e.g.
    # "mcp_django.users.django_user" for a Django session or a DRF token.
    "PRINCIPAL_RESOLVER": "mcp_protocol.transports.http.open_mode",
    "METRICS": True,
    # The cyclic GC of a worker holding many streams (transports/gc_tuning.py): frozen at
    # startup, then these thresholds. None: the process's GC is left as it is.
    "GC_THRESHOLD": (50_000, 20, 100),
}

ACCESS_DEFAULTS: dict[str, Any] = {
    "MODE": "open",  # env MCP_AUTH: open, keys, oauth or keys,oauth
    # Where API keys live (the access app: the database); built only in a mode with keys.
    "KEY_SOURCE": "access.keys.DatabaseKeySource",
    "AUDIT_SINK": None,  # dotted path of an AuditSink; None: no audit log
    "AUDIT_SINK_OPTIONS": {},  # its keyword arguments
    "AUDIT_QUEUE_SIZE": 10000,
    "AUDIT_ARGUMENTS_MAX_BYTES": 4096,
    "RATE_LIMITER": {"BACKEND": "mcp_protocol.auth.limits.MemoryRateLimiter", "OPTIONS": {}},
    "RATE": None,  # "N/S" per principal
    "TOOL_RATE": None,  # "N/S" per principal and tool
    "TOOL_RATES": {},  # {"tool name": "N/S"}
    "MAX_IN_FLIGHT": None,  # per principal, per worker
    "RESOURCE_URL": "http://127.0.0.1:8000/mcp",  # canonical URL of /mcp (RFC 8707 audience)
    # The authorization server's issuer URL, or "self": this project's own (the oauth_server app,
    # docs/guides/oauth-server.md), whose issuer is RESOURCE_URL's origin.
    "OAUTH_ISSUER": None,
    "OAUTH_JWKS_URL": None,
    # Dotted path of a callable (url, timeout) -> JWKS bytes; None: an HTTP GET of the JWKS URL.
    # With OAUTH_ISSUER=self, the app's own key set, read in this process.
    "OAUTH_JWKS_SOURCE": None,
    # Dotted path of a callable () -> JSON [[subject, client_id, before], ...]: grants revoked at
    # the authorization server (mcp_protocol/auth/revocations.py); None: none known. With
    # OAUTH_ISSUER=self, the built-in server's.
    "OAUTH_REVOCATIONS_SOURCE": None,
    "OAUTH_ALGORITHMS": ["RS256", "PS256", "ES256", "EdDSA"],
    "OAUTH_SCOPES": {"mcp": {}},  # scope → grant ({} = everything)
    "OAUTH_LEEWAY": 30.0,
    "OAUTH_JWKS_MIN_REFRESH": 10.0,
    "OAUTH_REQUIRE_TYP": False,  # refuse tokens not typed at+jwt (RFC 9068 §4)
}

BACKEND_KEYS = ("PROVIDER", "SESSION_STORE", "EVENT_STORE", "BUS", "TASK_STORE")


class MCPSettings:
    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}
        self._backends: dict[str, Any] = {}

    @property
    def user_settings(self) -> dict[str, Any]:
        return dict(getattr(settings, "MCP", {}) or {})

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"Invalid MCP setting: {name!r}")
        if name not in self._cache:
            user = self.user_settings
            self._cache[name] = user[name] if name in user else default(name)
        return self._cache[name]

    def backend(self, name: str) -> Any:
        """The process-wide instance of the backend named by setting ``name``."""
        if name not in self._backends:
            spec = getattr(self, name)
            cls = import_string(spec["BACKEND"])
            options = dict(spec.get("OPTIONS", {}))
            if name == "SESSION_STORE":
                # The top-level session settings are the store's defaults; OPTIONS may override.
                options.setdefault("ttl", float(self.SESSION_TTL))
                options.setdefault("max_sessions", self.MAX_SESSIONS)
                options.setdefault("max_sessions_per_principal", self.MAX_SESSIONS_PER_PRINCIPAL)
            if name == "TASK_STORE":
                options.setdefault("max_open_per_principal", self.MAX_TASKS_PER_PRINCIPAL)
                options.setdefault("max_finished_per_principal", self.MAX_FINISHED_TASKS_PER_PRINCIPAL)
            self._backends[name] = build_backend(cls, options)
        return self._backends[name]

    def principal_resolver(self) -> Any:
        return import_string(self.PRINCIPAL_RESOLVER)

    def reload(self) -> None:
        self._cache.clear()
        self._backends.clear()


mcp_settings = MCPSettings()


def build_backend(cls: Any, options: dict[str, Any]) -> Any:
    """``cls`` built from its ``OPTIONS``: a Redis backend's connection keys become one
    ``RedisOptions`` (mcp_protocol/redis_client/options.py), handed down as ``redis=``; a key
    the backend does not know raises ``UnknownOption`` naming it (and ``check_mcp_settings``
    reported it at startup)."""
    from mcp_protocol.options import with_connection

    return cls(**with_connection(cls, options))


def installed_providers() -> list[str]:
    """The ``mcp_provider`` dotted paths that installed apps declare on their ``AppConfig``: an app
    of definitions (the registry) serves them once it is in ``INSTALLED_APPS``, with no ``MCP``
    setting to write. ``mcp_protocol`` learns the path from the app; it imports nothing of it."""
    from django.apps import apps

    return [path for config in apps.get_app_configs() if (path := getattr(config, "mcp_provider", None))]


def default(name: str) -> Any:
    """The value of setting ``name`` when ``MCP`` does not give it."""
    if name == "PROVIDER":
        declared = installed_providers()
        if declared:
            return {"BACKEND": declared[0], "OPTIONS": {}}
    return DEFAULTS[name]


def _reload(*, setting: str, **kwargs: Any) -> None:
    if setting == "MCP":
        mcp_settings.reload()


setting_changed.connect(_reload)


def cursor_secret() -> bytes:
    secret = mcp_settings.CURSOR_SECRET
    if secret:
        return secret.encode() if isinstance(secret, str) else bytes(secret)
    # Derived, not the SECRET_KEY itself: a cursor must never help recover it.
    return hashlib.sha256(b"mcpsite.cursor:" + settings.SECRET_KEY.encode()).digest()


def request_state_keys() -> list[bytes]:
    keys = [k.encode() if isinstance(k, str) else bytes(k) for k in mcp_settings.REQUEST_STATE_KEYS if k]
    # Derived, like the cursor key: a requestState must never help recover SECRET_KEY.
    return keys or [hashlib.sha256(b"mcpsite.request-state:" + settings.SECRET_KEY.encode()).digest()]


def build_approvals(bus: Any) -> Approvals:
    """The approval policies' parts (``mcp_protocol/approvals.py``): the queue ``APPROVAL_QUEUE``
    names, built with ``bus`` (a decision on one worker reaches the call waiting on another)."""
    from mcp_protocol.approvals import Approvals

    path = mcp_settings.APPROVAL_QUEUE
    queue = None
    if path and bus is not None:
        try:
            queue = import_string(path)(bus)
        except (ImportError, RuntimeError):  # RuntimeError: Django's "model … isn't in an application"
            if path != DEFAULTS["APPROVAL_QUEUE"]:
                raise  # a queue the project named must be there
            # The default is the access app's: a project that embeds the endpoint alone has none,
            # and its staff-approved tools are refused (never run unapproved).
    return Approvals(queue=queue, timeout=float(mcp_settings.APPROVAL_TIMEOUT_SECONDS))


def build_server(provider: Provider, **parts: Any) -> Server:
    """The protocol core configured from settings; every transport builds it here. ``parts``: its
    collaborators (``interceptor``, ``tracing``), given by whoever has them."""
    from mcp_protocol.endpoints import ToolSearch
    from mcp_protocol.server import Server

    return Server(
        provider,
        name=mcp_settings.SERVER_NAME,
        version=mcp_settings.SERVER_VERSION,
        title=mcp_settings.SERVER_TITLE,
        instructions=mcp_settings.INSTRUCTIONS,
        page_size=int(mcp_settings.PAGE_SIZE),
        cursor_secret=cursor_secret(),
        client_request_timeout=float(mcp_settings.CLIENT_REQUEST_TIMEOUT),
        request_state_keys=request_state_keys(),
        request_state_ttl=float(mcp_settings.REQUEST_STATE_TTL),
        tool_search=ToolSearch(str(mcp_settings.TOOL_SEARCH), int(mcp_settings.TOOL_SEARCH_THRESHOLD)),
        list_filter=bool(mcp_settings.TOOLS_LIST_FILTER),
        search_ranking=str(mcp_settings.TOOL_SEARCH_RANKING),
        **parts,
    )


SELF_ISSUER = "self"
SELF_JWKS_SOURCE = "oauth_server.keys.jwks_document"
SELF_REVOCATIONS_SOURCE = "oauth_server.revocations.watermarks"


def access_settings() -> dict[str, Any]:
    """``MCP["ACCESS"]`` merged over ``ACCESS_DEFAULTS``. ``OAUTH_ISSUER=self`` is resolved here,
    once for every reader: the issuer becomes ``RESOURCE_URL``'s origin (RFC 8414 §2: an https URL
    with no query or fragment; the metadata then sits at the origin's well-known path), the JWKS
    is read in-process, and ``OAUTH_SELF`` tells the built-in authorization server it is on."""
    config = {**ACCESS_DEFAULTS, **(mcp_settings.ACCESS or {})}
    config["OAUTH_SELF"] = config["OAUTH_ISSUER"] == SELF_ISSUER
    if config["OAUTH_SELF"]:
        config["OAUTH_ISSUER"] = self_issuer(str(config["RESOURCE_URL"]))
        config["OAUTH_JWKS_SOURCE"] = config["OAUTH_JWKS_SOURCE"] or SELF_JWKS_SOURCE
        config["OAUTH_REVOCATIONS_SOURCE"] = config["OAUTH_REVOCATIONS_SOURCE"] or SELF_REVOCATIONS_SOURCE
    return config


def self_issuer(resource_url: str) -> str:
    """The built-in authorization server's issuer: the origin ``resource_url`` is served from."""
    parts = urlsplit(resource_url)
    return f"{parts.scheme}://{parts.netloc}"
