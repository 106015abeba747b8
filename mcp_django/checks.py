"""Django system checks of the ``MCP`` setting (``manage.py check``, and every ``runserver`` /
``migrate``): a misspelt key, a backend path that does not import or is not the right kind, or a
limit that cannot work is reported with the setting's name at startup, not at the first request.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.apps import apps as django_apps
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.db import DatabaseError
from django.utils.module_loading import import_string

from mcp_protocol.bus.base import Bus
from mcp_protocol.endpoints import OFF, SEARCH_MODES, valid_slug
from mcp_protocol.options import known_options, unknown_options
from mcp_protocol.provider import Provider
from mcp_protocol.search import MODES as SEARCH_RANKINGS
from mcp_protocol.stores.events import EventStore
from mcp_protocol.stores.sessions import SessionStore
from mcp_protocol.stores.tasks import TaskStore

from .conf import BACKEND_KEYS, DEFAULTS, default, installed_providers

KINDS: dict[str, type] = {
    "PROVIDER": Provider, "SESSION_STORE": SessionStore, "EVENT_STORE": EventStore, "BUS": Bus,
    "TASK_STORE": TaskStore,
}
POSITIVE = ("SESSION_TTL", "MAX_SESSIONS", "MAX_SESSIONS_PER_PRINCIPAL", "MAX_BODY_BYTES",
            "KEEPALIVE_SECONDS", "CLIENT_REQUEST_TIMEOUT", "PAGE_SIZE", "SSE_RETRY_MS",
            "APPROVAL_TIMEOUT_SECONDS")


def _backend(key: str, spec: Any) -> list[CheckMessage]:
    where = f"MCP[{key!r}]"
    if not isinstance(spec, dict) or not isinstance(spec.get("BACKEND"), str):
        return [Error(f"{where} must be {{'BACKEND': 'dotted.path', 'OPTIONS': {{...}}}}", id="mcp.E002")]
    try:
        cls = import_string(spec["BACKEND"])
    except ImportError as exc:
        return [Error(f"{where}['BACKEND'] cannot be imported: {exc}", id="mcp.E003")]
    if not (isinstance(cls, type) and issubclass(cls, KINDS[key])):
        return [Error(f"{where}['BACKEND'] {spec['BACKEND']} is not a {KINDS[key].__name__}", id="mcp.E004")]
    if not isinstance(spec.get("OPTIONS", {}), dict):
        return [Error(f"{where}['OPTIONS'] must be a dict", id="mcp.E005")]
    return _options(f"{where}['OPTIONS']", cls, spec.get("OPTIONS", {}))


def _options(where: str, cls: type, options: dict[str, Any]) -> list[CheckMessage]:
    """A key the backend does not take would stop it at its construction: say so at startup,
    with the keys it knows (mcp_protocol/options.py; connection keys: RedisOptions)."""
    unknown = unknown_options(cls, options)
    if not unknown:
        return []
    names = ", ".join(repr(k) for k in unknown)
    return [Error(f"{where} has {names}, not an option of {cls.__name__}",
                  hint=f"Its options are: {', '.join(sorted(known_options(cls) or ()))}", id="mcp.E012")]


def _access_backends(access: Any) -> list[CheckMessage]:
    """The rate limiter's and the audit sink's ``OPTIONS``, as the backends' above."""
    if not isinstance(access, dict):
        return []
    messages: list[CheckMessage] = []
    limiter = access.get("RATE_LIMITER")
    if isinstance(limiter, dict) and isinstance(limiter.get("BACKEND"), str):
        with contextlib.suppress(ImportError):
            cls = import_string(limiter["BACKEND"])
            where = "MCP['ACCESS']['RATE_LIMITER']['OPTIONS']"
            messages += _options(where, cls, limiter.get("OPTIONS") or {})
    sink = access.get("AUDIT_SINK")
    if isinstance(sink, str):
        with contextlib.suppress(ImportError):
            cls = import_string(sink)
            where = "MCP['ACCESS']['AUDIT_SINK_OPTIONS']"
            messages += _options(where, cls, access.get("AUDIT_SINK_OPTIONS") or {})
    return messages


@register()
def check_mcp_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    user = getattr(settings, "MCP", {}) or {}
    messages: list[CheckMessage] = []
    for key in sorted(set(user) - set(DEFAULTS)):
        known = f"Known settings: {', '.join(DEFAULTS)}"
        messages.append(Error(f"MCP[{key!r}] is not a setting of mcpsite", hint=known, id="mcp.E001"))
    for key in BACKEND_KEYS:
        messages += _backend(key, user[key] if key in user else default(key))
    messages += _access_backends(user.get("ACCESS") or {})
    declared = installed_providers()
    if "PROVIDER" not in user and len(declared) > 1:
        messages.append(Error(f"Several installed apps declare an MCP provider: {', '.join(declared)}",
                              hint="Choose one with MCP = {'PROVIDER': {'BACKEND': '...'}}", id="mcp.E007"))
    for key in POSITIVE:
        value = user.get(key, DEFAULTS[key])
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            messages.append(Error(f"MCP[{key!r}] must be a positive number, not {value!r}", id="mcp.E006"))
    resolver = user.get("PRINCIPAL_RESOLVER", DEFAULTS["PRINCIPAL_RESOLVER"])
    try:
        if not callable(import_string(resolver)):
            raise ImportError(f"{resolver} is not callable")
    except (ImportError, TypeError, ValueError) as exc:
        messages.append(Error(f"MCP['PRINCIPAL_RESOLVER'] {resolver!r} is not a usable resolver: {exc}",
                              hint="A dotted path to a callable (scope) -> principal", id="mcp.E008"))
    default_server = user.get("DEFAULT_SERVER")
    well_formed = isinstance(default_server, str) and valid_slug(default_server)
    if default_server not in (None, "", OFF) and not well_formed:
        messages.append(Error(f"MCP['DEFAULT_SERVER'] {default_server!r} is not a virtual server slug",
                              hint="Unset (/mcp serves everything), 'off', or a slug: a-z, 0-9, '-', '_'",
                              id="mcp.E013"))
    if user.get("TOOL_SEARCH", DEFAULTS["TOOL_SEARCH"]) not in SEARCH_MODES:
        messages.append(Error(f"MCP['TOOL_SEARCH'] {user.get('TOOL_SEARCH')!r} is not a tool search mode",
                              hint=f"One of {', '.join(SEARCH_MODES)}", id="mcp.E016"))
    if user.get("TOOL_SEARCH_RANKING", DEFAULTS["TOOL_SEARCH_RANKING"]) not in SEARCH_RANKINGS:
        ranking = user.get("TOOL_SEARCH_RANKING")
        messages.append(Error(f"MCP['TOOL_SEARCH_RANKING'] {ranking!r} is not a ranking",
                              hint=f"One of {', '.join(SEARCH_RANKINGS)}", id="mcp.E016"))
    threshold = user.get("TOOL_SEARCH_THRESHOLD", DEFAULTS["TOOL_SEARCH_THRESHOLD"])
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0:
        messages.append(Error(f"MCP['TOOL_SEARCH_THRESHOLD'] must be an integer >= 0, not {threshold!r}",
                              id="mcp.E006"))
    close_after = user.get("CLOSE_STREAM_AFTER_SECONDS")
    if close_after is not None and (not isinstance(close_after, int | float) or close_after < 0):
        messages.append(Error(f"MCP['CLOSE_STREAM_AFTER_SECONDS'] must be >= 0 or None, not {close_after!r}",
                              id="mcp.E006"))
    return messages


ROUTE_HINT = (
    "Route it in the project's ASGI application: ProtocolTypeRouter({'http': URLRouter("
    "[mcp_path('mcp'), re_path(r'', get_asgi_application())]), 'lifespan': lifespan}) with "
    "mcp_path and lifespan from mcp_django.routing (docs/guides/django-project.md)."
)


@register("mcp")
def check_mcp_routing(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The endpoint must be reachable: ``ASGI_APPLICATION`` names an app whose routing tree holds
    an ``MCPEndpoint`` (``routing.mcp_path``). Without it every MCP client gets the project's 404."""
    from .routing import find_endpoints, in_urlconf

    if in_urlconf():
        return [Error("An MCP endpoint is in ROOT_URLCONF's urlpatterns, where Django's views go",
                      hint=f"It is an ASGI app, not a view: move it to the ASGI routing. {ROUTE_HINT}",
                      id="mcp.E011")]
    dotted = getattr(settings, "ASGI_APPLICATION", None)
    if not dotted:
        return [Warning("ASGI_APPLICATION is not set, so nothing serves the MCP endpoint",
                        hint=f"Set ASGI_APPLICATION = '<project>.asgi.application'. {ROUTE_HINT}",
                        id="mcp.W010")]
    try:
        app = import_string(dotted)
    except Exception as exc:  # the module runs project code: any failure is worth naming
        return [Error(f"ASGI_APPLICATION {dotted!r} cannot be imported: {exc}", id="mcp.E010")]
    if next(find_endpoints(app), None) is None:
        return [Warning(f"ASGI_APPLICATION {dotted!r} routes no MCP endpoint", hint=ROUTE_HINT,
                        id="mcp.W011")]
    return []


@register(Tags.database)
def check_default_server(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A database check (``check --database default``; Django runs none by default): the slug
    ``MCP['DEFAULT_SERVER']`` names is an enabled virtual server of the registry. Only a warning:
    a server can be made after the deployment starts, and until then ``/mcp`` answers 404."""
    slug = (getattr(settings, "MCP", {}) or {}).get("DEFAULT_SERVER")
    if not databases or not isinstance(slug, str) or slug in ("", OFF) or not valid_slug(slug):
        return []
    try:
        model = django_apps.get_model("registry", "VirtualServer")
        found = model.objects.filter(slug=slug, enabled=True).exists()
    except (LookupError, DatabaseError):  # no registry app, or its table is not there yet
        return []
    if found:
        return []
    return [Warning(f"MCP['DEFAULT_SERVER'] names {slug!r}, which is no enabled virtual server",
                    hint="/mcp answers 404 until a server with this slug is enabled", id="mcp.W012")]
