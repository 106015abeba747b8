"""What an ``http`` tool row must satisfy, beyond each field's own validator (``Tool.clean``).

Field validators: ``validate_http_headers`` (static headers; no credential-looking name: that is
what the secret header is for), ``validate_result_pointer`` (an RFC
6901 JSON Pointer). ``http_tool_errors`` checks the fields together: the URL template's variables
and the body template's placeholders are input properties (``templating.template_problems``),
an enabled tool's host is on ``REGISTRY_HTTP_ALLOWED_HOSTS``, a GET sends no body, and the secret's
and the signing secret's environment variables are ones a tool may use (``secret_env``).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

from mcp_protocol.uri_template import TemplateSyntaxError, parse_template

from ...validation.templating import input_properties, template_problems
from . import config, guard, secret_env

_TOKEN_RE = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # RFC 9110 §5.1 field-name
_FIELD_VALUE_RE = re.compile(r"^[\t\x20-\x7e\x80-\xff]*$")  # RFC 9110 §5.5: no CR, LF or NUL
# Headers the kind sets itself (framing, the signature, forwarded context): a static header may
# not replace them (compared lower-case).
RESERVED_HEADERS = frozenset({
    "host", "content-length", "transfer-encoding", "connection", "content-type", "te", "upgrade",
    "x-mcp-signature", "x-mcp-timestamp", "x-mcp-tool", "x-mcp-principal", "traceparent", "tracestate",
})
# Static headers are data: shown in the admin and the API, kept in every version, exported. A
# credential there leaks through all of them (issue 37 item 7); the secret header reads its value
# from the environment at call time instead. Refused: these names, and names holding these words.
CREDENTIAL_HEADERS = frozenset({
    "authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "apikey", "x-apikey",
    "x-amz-security-token", "x-goog-api-key",
})
CREDENTIAL_WORDS = ("token", "secret", "password", "passwd", "credential", "api-key", "api_key", "apikey",
                    "auth", "session", "signature")
METHODS_WITHOUT_BODY = ("GET", "DELETE")
_POINTER_RE = re.compile(r"^(/([^~/]|~[01])*)*$")


def validate_http_headers(value: Any) -> None:
    if value in (None, {}):
        return
    if not isinstance(value, dict):
        raise ValidationError('Static headers are a JSON object: {"Accept-Language": "en"}.', code="headers")
    for name, text in value.items():
        if not _TOKEN_RE.fullmatch(name):
            raise ValidationError(f"{name!r} is not an HTTP header name (RFC 9110 token).", code="headers")
        if name.lower() in RESERVED_HEADERS:
            raise ValidationError(f"{name!r} is set by the server; it cannot be a static header.",
                                  code="headers_reserved")
        if looks_like_credential(name):
            raise ValidationError(
                f"{name!r} looks like a credential, and static headers are shown in the admin, the API, "
                "history and exports: give it as the secret header instead (http_secret_header "
                f"{name!r}, http_secret_env naming the environment variable that holds the value).",
                code="headers_credential")
        if not isinstance(text, str) or not _FIELD_VALUE_RE.fullmatch(text):
            raise ValidationError(f"The value of {name!r} must be text without line breaks.", code="headers")


def looks_like_credential(name: str) -> bool:
    lowered = name.lower()
    return lowered in CREDENTIAL_HEADERS or any(word in lowered for word in CREDENTIAL_WORDS)


def validate_result_pointer(value: str) -> None:
    if value and not _POINTER_RE.fullmatch(value):
        raise ValidationError(
            "A JSON Pointer (RFC 6901): empty for the whole reply, or '/data', '/items/0', ...",
            code="json_pointer",
        )


def host_refused(url: str) -> str | None:
    """Why an enabled tool may not call ``url``'s host (None: it may). The call checks again
    (``kinds/http.py``), so tightening the setting stops saved rows too; checking at save as well
    means a tool that could only ever fail is not served in the first place. A disabled tool may
    keep such a URL (a draft, or the demo's example): nobody can call it."""
    host = (urlsplit(url).hostname or "").lower()
    if not host or guard.host_allowed(host, config.allowed_hosts()):
        return None
    allowed = ", ".join(config.allowed_hosts()) or "empty"
    return (f"{host!r} is not in REGISTRY_HTTP_ALLOWED_HOSTS (now: {allowed}): add it to that "
            "setting, or save the tool disabled.")


def http_tool_errors(tool: Any) -> dict[str, str]:
    """Field name → message for an http tool's fields taken together (``{}``: fine)."""
    errors: dict[str, str] = {}
    properties = set(((tool.input_schema or {}).get("properties") or {}).keys())
    if not tool.http_url:
        errors["http_url"] = "An http tool needs a URL."
    else:
        try:
            variables = set(parse_template(tool.http_url).variables) if "{" in tool.http_url else set()
        except TemplateSyntaxError:
            variables = set()  # the field's validator reports it
        missing = sorted(variables - properties)
        if missing:
            errors["http_url"] = (f"The URL uses {', '.join(missing)}, which the input schema does not "
                                  "define: add them to its properties.")
        elif tool.enabled and (host_problem := host_refused(tool.http_url)):
            errors["http_url"] = host_problem
    if tool.http_body_template is not None:
        if tool.http_method == "GET":
            errors["http_body_template"] = "A GET request has no body: remove the body template."
        problems = template_problems(tool.http_body_template, input_properties(tool.input_schema))
        if problems:
            errors["http_body_template"] = " ".join(problems)
    if bool(tool.http_secret_header) != bool(tool.http_secret_env):
        errors["http_secret_env"] = (
            "Give both the secret header name and its environment variable, or neither.")
    elif tool.http_secret_env and not secret_env.allowed(tool.http_secret_env):
        errors["http_secret_env"] = f"{tool.http_secret_env!r} cannot be sent: {secret_env.rule()}."
    elif tool.http_secret_header and tool.http_secret_header.lower() in RESERVED_HEADERS:
        errors["http_secret_header"] = f"{tool.http_secret_header!r} is set by the server."
    if getattr(tool, "http_connection", "") and (tool.http_secret_header or "").lower() == "authorization":
        # Calling as the user puts the user's token in Authorization (acting.py): one or the other.
        errors["http_secret_header"] = ("This tool calls as the user, whose token goes in Authorization: "
                                        "choose another secret header or no secret.")
    if tool.http_signing_secret_env and not secret_env.allowed(tool.http_signing_secret_env):
        errors["http_signing_secret_env"] = (
            f"{tool.http_signing_secret_env!r} cannot be used: {secret_env.rule()}.")
    return errors
