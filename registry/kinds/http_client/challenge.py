"""What a service's 401 or 403 to a bearer token means (RFC 6750 §3, §3.1), for the http kind and
the upstream calls alike.

- 401 (``invalid_token``, or no error code): the token is expired, revoked, malformed: the vault
  refreshes or drops it and the user is asked to connect again (``acting.forget``).
- 403: the token is valid but not allowed. RFC 6750 §3.1 ``insufficient_scope``: "The request
  requires higher privileges than provided by the access token", with the ``scope`` needed. Either
  way the token is kept: dropping a good token and asking the user to consent again would loop for
  an account that simply lacks access. A plain 403 is the service's answer, its reason relayed.
  ``insufficient_scope`` is a step-up challenge (2025-11-25 basic/authorization.mdx "Scope
  Challenge Handling": a client re-authorizes with the scopes it had plus the challenged ones):
  for a user's token, ``acting.step_up`` has the user connect again when the operator's provider
  allows every scope asked for; otherwise the error names the scope and why it is not asked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .reply import parse_json, upstream_message

MAX_REASON = 300  # characters of a service's reason, in our error
# auth-param = token BWS "=" BWS ( token / quoted-string ) (RFC 9110 §11.2)
_PARAM = re.compile(r'([A-Za-z0-9!#$%&\'*+.^_`|~-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]+)')
# The start of the next challenge: a scheme name followed by its first auth-param.
_NEXT_SCHEME = re.compile(r",\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+\s+[A-Za-z0-9!#$%&'*+.^_`|~-]+\s*=")
_BEARER = re.compile(r"(?:^|,)\s*Bearer(?:\s+|$)", re.IGNORECASE)


def bearer_params(header: str) -> dict[str, str]:
    """The auth-params of the ``Bearer`` challenge in a ``WWW-Authenticate`` value (RFC 6750 §3),
    names lower-cased, quoted values unescaped; empty when there is none."""
    found = _BEARER.search(header or "")
    if found is None:
        return {}
    rest = header[found.end():]
    following = _NEXT_SCHEME.search(rest)
    if following is not None:
        rest = rest[:following.start()]
    params: dict[str, str] = {}
    for name, value in _PARAM.findall(rest):
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        params.setdefault(name.lower(), value)
    return params


@dataclass(frozen=True)
class Forbidden:
    """A 403 to a token: ``scope`` is set for an ``insufficient_scope`` challenge, ``reason`` is
    the service's own words (the challenge's ``error_description``, else its body's message)."""

    reason: str
    scope: str | None = None

    @property
    def insufficient_scope(self) -> bool:
        return self.scope is not None

    def explain(self, service: str, step_up: str = "") -> str:
        """One sentence for the caller: what ``service`` refused; for a missing scope, ``step_up``
        says why it was not asked for (``acting.step_up``)."""
        if self.scope is not None:
            needed = f"the scope {self.scope!r}" if self.scope else "a scope it did not name"
            said = (f"{service} needs {needed}, which the token was not granted "
                    f"(HTTP 403 insufficient_scope: {self.reason})")
            return f"{said}; {step_up}" if step_up else said
        return f"{service} refused access (HTTP 403): {self.reason}"


def forbidden(www_authenticate: str, body: str, content_type: str) -> Forbidden:
    """Read a 403 answer: its ``WWW-Authenticate`` header and the start of its body."""
    params = bearer_params(www_authenticate)
    scope = params.get("scope", "") if params.get("error") == "insufficient_scope" else None
    reason = params.get("error_description") or _body_reason(body, content_type) or "no reason given"
    return Forbidden(reason[:MAX_REASON], scope)


def _body_reason(body: str, content_type: str) -> str:
    """An OAuth error body's ``error_description`` (RFC 6749 §5.2 shape), else the message
    ``reply.upstream_message`` finds."""
    if not body.strip():
        return ""
    is_json, data = parse_json(body, content_type)
    if is_json and isinstance(data, dict) and isinstance(data.get("error_description"), str):
        return str(data["error_description"])
    return upstream_message(body, content_type)
