"""The rules of an upstream's configuration across its fields (``Upstream.clean``: the admin, the
REST API and imports), and which fields of a mirrored row are the operator's.

- The URL goes where the http kind may go (issue 40 item 1): its host in
  ``REGISTRY_HTTP_ALLOWED_HOSTS`` and, with ``REGISTRY_HTTP_FORBID_PRIVATE`` on, no private IP
  literal (a name is checked on the address it resolves to, when connecting). A disabled upstream
  may keep such a URL, as a disabled http tool may: nothing connects to it.
- Authentication names environment variables, never holds a secret; the variable must be one an
  http tool may send (``kinds/http_client/secret_env.py``), since its value goes to the upstream's
  host (or its token endpoint) the same way.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from . import guard, secret_env
from .validation import host_refused

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def url_problem(url: str, enabled: bool) -> str | None:
    """Why an upstream at ``url`` may not be connected to (None: it may, as far as the URL says)."""
    host = (urlsplit(url).hostname or "").lower()
    if not host or not enabled:
        return None
    private = guard.address_problem(host)
    if private:
        return f"Refused by the outbound rules: {private}."
    refused = host_refused(url)
    if refused:
        return "Refused by the outbound rules: " + refused.replace("save the tool disabled",
                                                                   "save the upstream disabled")
    return None


def env_problem(name: str) -> str | None:
    if not ENV_NAME.fullmatch(name):
        return (f"{name!r} is not the name of an environment variable: give the variable's NAME "
                "(e.g. UPSTREAM_X_TOKEN); its value, the secret, is never stored.")
    if not secret_env.allowed(name):
        return f"{name!r} cannot be used: {secret_env.rule()}."
    return None


def provider_problem(slug: str) -> str | None:
    """Why ``slug`` names no usable provider (None: it does). The provider is a row of the
    ``connections`` app, above this one: looked up through the app registry, not imported; with
    that app not installed nothing can act as the user."""
    from django.apps import apps

    if not apps.is_installed("connections"):
        return "Calling as the user needs the connections app (INSTALLED_APPS)."
    provider = apps.get_model("connections", "Provider")
    if not provider._default_manager.filter(slug=slug).exists():
        return f"No connection provider {slug!r}: add it under Connected services first."
    return None


def upstream_errors(upstream: Any) -> dict[str, str]:
    """Field name → message for an upstream's fields taken together (``{}``: fine)."""
    errors: dict[str, str] = {}
    if upstream.url and (problem := url_problem(upstream.url, upstream.enabled)):
        errors["url"] = problem
    kind = upstream.auth
    if kind == "user":
        # The caller's token at a provider (issue 42 item 3); listed with ``sync_auth``'s credential.
        if not upstream.connection:
            errors["connection"] = "Calling as the user needs a connection provider's slug."
        elif (problem := provider_problem(upstream.connection)) is not None:
            errors["connection"] = problem
        kind = upstream.sync_auth or "none"
    elif getattr(upstream, "connection", ""):
        errors["connection"] = "Only an upstream called as the user names a connection provider."
    if kind == "header":
        if not upstream.auth_header:
            errors["auth_header"] = "Header authentication needs the header's name (e.g. Authorization)."
        if not upstream.auth_secret_env:
            errors["auth_secret_env"] = ("Header authentication needs the environment variable holding "
                                         "the value.")
    elif kind == "client_credentials":
        for name, what in (("oauth_token_url", "the token endpoint's URL"),
                           ("oauth_client_id", "a client id"),
                           ("auth_secret_env", "the environment variable holding the client secret")):
            if not getattr(upstream, name):
                errors[name] = f"OAuth client credentials need {what}."
        if upstream.oauth_token_url and "oauth_token_url" not in errors and (
                problem := url_problem(upstream.oauth_token_url, upstream.enabled)):
            errors["oauth_token_url"] = problem
    if kind != "none" and upstream.auth_secret_env and "auth_secret_env" not in errors:
        if problem := env_problem(upstream.auth_secret_env):
            errors["auth_secret_env"] = problem
    if upstream.timeout is not None and not 0 < upstream.timeout <= 3600:
        errors["timeout"] = "A timeout is more than 0 and at most 3600 seconds."
    if upstream.connect_timeout is not None and not 0 < upstream.connect_timeout <= 600:
        errors["connect_timeout"] = "A connect timeout is more than 0 and at most 600 seconds."
    if upstream.max_concurrency is not None and not 1 <= upstream.max_concurrency <= 10_000:
        errors["max_concurrency"] = "At least 1 and at most 10000 calls at once."
    return errors


