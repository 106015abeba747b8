"""Which of the server's environment variables an ``http`` tool may send upstream as its secret.

A tool's editor names the variable (``Tool.http_secret_env``) and every call sends its value in
``http_secret_header`` to the tool's host. With no rule, any variable of the server's environment
(``SECRET_KEY``, ``DATABASE_URL`` and its password, ``REDIS_URL``, ``MCP_REQUEST_STATE_KEYS``) could
go to an allowed host that echoes it back into the result (issue 24 item 3). A tool may name only a
variable that starts with one of ``REGISTRY_HTTP_SECRET_ENV_PREFIXES`` (default ``MCP_TOOL_SECRET_``)
or is listed in ``REGISTRY_HTTP_SECRET_ENV_ALLOWED`` (default: none). The rule is checked when a
tool is saved (``Tool.clean``: the admin, the REST API, imports) and again at call time
(``kinds/http.py``), so a row written around validation, or one saved before the rule was
tightened, sends nothing. Both settings are read when asked, like ``REGISTRY_HTTP_ALLOWED_HOSTS``.
"""

from __future__ import annotations

from django.conf import settings

DEFAULT_PREFIXES = ("MCP_TOOL_SECRET_",)


def _prefixes() -> list[str]:
    configured = getattr(settings, "REGISTRY_HTTP_SECRET_ENV_PREFIXES", DEFAULT_PREFIXES)
    return [p for p in configured if p]  # an empty prefix would allow every variable


def allowed(name: str) -> bool:
    """Whether a tool may send the variable ``name`` (exact, case-sensitive names)."""
    if name in getattr(settings, "REGISTRY_HTTP_SECRET_ENV_ALLOWED", ()):
        return True
    return any(name.startswith(prefix) for prefix in _prefixes())


def rule() -> str:
    """The rule in words, for a field error or a tool error."""
    prefixes = " or ".join(_prefixes()) or "(no prefix)"
    listed = ", ".join(getattr(settings, "REGISTRY_HTTP_SECRET_ENV_ALLOWED", ())) or "none"
    return (f"a tool may send only environment variables whose names start with {prefixes} "
            f"(REGISTRY_HTTP_SECRET_ENV_PREFIXES) or are listed in REGISTRY_HTTP_SECRET_ENV_ALLOWED "
            f"({listed})")
