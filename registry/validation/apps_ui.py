"""MCP Apps (extension ``io.modelcontextprotocol/ui``, modelcontextprotocol/ext-apps): a tool links
to an interactive HTML view, a ``ui://`` resource served as ``text/html;profile=mcp-app``.

Wire form (ext-apps specification 2026-01-26):

- the view resource's ``_meta.ui``: ``csp`` (``connectDomains``, ``resourceDomains``,
  ``frameDomains``, ``baseUriDomains``: the origins the host lets the sandboxed view reach) and
  ``permissions`` (``camera``, ``microphone``, ``geolocation``, ``clipboardWrite``, each ``{}``),
  in ``resources/list`` and on the ``resources/read`` contents;
- the tool's ``_meta.ui``: ``resourceUri`` (the view) and ``visibility`` (``model`` and/or
  ``app``: who may call the tool).

The rows keep these as fields (``Resource.ui_csp``, ``ui_permissions``; ``Tool.ui_resource_uri``,
``ui_visibility``), validated here; ``content_security_policy`` builds the header the admin's
preview serves the view under, so the preview blocks what a host would.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

APP_MIME = "text/html;profile=mcp-app"
UI_SCHEME = "ui://"
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
VISIBILITY = ("model", "app")


def is_app_mime(mime_type: str | None) -> bool:
    return (mime_type or "").replace(" ", "").lower() == APP_MIME


def csp_problem(csp: Any) -> str | None:
    if not isinstance(csp, dict) or set(csp) - set(CSP_KEYS):
        return f"An object with lists of origins under {', '.join(CSP_KEYS)}."
    for key, origins in csp.items():
        if not isinstance(origins, list):
            return f"{key} must be a list of origins."
        for origin in origins:
            parts = urlsplit(origin) if isinstance(origin, str) else None
            if parts is None or parts.scheme not in ("https", "http", "wss", "ws") or not parts.netloc \
                    or parts.path not in ("", "/") or parts.query or parts.fragment \
                    or any(c in origin for c in " ;,'\""):
                return f"{key}: {origin!r} is not an origin such as https://api.example.com."
    return None


def permissions_problem(permissions: Any) -> str | None:
    if not isinstance(permissions, list) or any(p not in PERMISSIONS for p in permissions):
        return f"A list among {', '.join(PERMISSIONS)}."
    return None


def visibility_problem(visibility: Any) -> str | None:
    if not isinstance(visibility, list) or not visibility or any(v not in VISIBILITY for v in visibility):
        return "A non-empty list among model, app."
    return None


def resource_ui_meta(csp: dict[str, list[str]], permissions: list[str]) -> dict[str, Any]:
    ui: dict[str, Any] = {"csp": {k: list(csp.get(k, [])) for k in CSP_KEYS}}
    if permissions:
        ui["permissions"] = {p: {} for p in permissions}
    return {"ui": ui}


def tool_ui_meta(resource_uri: str, visibility: list[str]) -> dict[str, Any]:
    return {"ui": {"resourceUri": resource_uri, "visibility": list(visibility or VISIBILITY)}}


def content_security_policy(csp: dict[str, list[str]]) -> str:
    """The CSP a host applies to the view (ext-apps "Security": nothing beyond what it declares)."""
    def sources(key: str) -> str:
        return " ".join(["'self'", *csp.get(key, [])]) if key != "baseUriDomains" else \
            " ".join(csp.get(key, [])) or "'none'"

    resources = " ".join(["'unsafe-inline'", "data:", *csp.get("resourceDomains", [])])
    frames = " ".join(csp.get("frameDomains", [])) or "'none'"
    connect = " ".join(csp.get("connectDomains", [])) or "'none'"
    return "; ".join([
        "default-src 'none'",
        f"script-src {resources}",
        f"style-src {resources}",
        f"img-src {resources}",
        f"font-src {resources}",
        f"media-src {resources}",
        f"connect-src {connect}",
        f"frame-src {frames}",
        f"base-uri {sources('baseUriDomains')}",
        "form-action 'none'",
    ])


def resource_errors(uri: str, mime_type: str | None, csp: Any, permissions: Any) -> dict[str, str]:
    errors: dict[str, str] = {}
    if is_app_mime(mime_type) and not uri.startswith(UI_SCHEME):
        errors["uri"] = f"An app view ({APP_MIME}) must have a ui:// URI."
    if csp and (problem := csp_problem(csp)):
        errors["ui_csp"] = problem
    if permissions and (problem := permissions_problem(permissions)):
        errors["ui_permissions"] = problem
    if (csp or permissions) and not is_app_mime(mime_type):
        errors.setdefault("mime_type", f"CSP domains and permissions are for app views ({APP_MIME}).")
    return errors


def tool_errors(resource_uri: str, visibility: Any) -> dict[str, str]:
    errors: dict[str, str] = {}
    if resource_uri and not resource_uri.startswith(UI_SCHEME):
        errors["ui_resource_uri"] = "An app view is a ui:// resource."
    if visibility and (problem := visibility_problem(visibility)):
        errors["ui_visibility"] = problem
    return errors
