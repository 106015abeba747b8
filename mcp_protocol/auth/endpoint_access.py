"""Who may call a virtual server (``/mcp/<slug>``, ``endpoints.py``): the rules of its
``EndpointAccess`` that ``AccessPolicy.authenticate`` applies when the router put the endpoint's
spec in the request's scope (``endpoints.SCOPE_KEY``). Pure: no I/O, no key ring, no verifier.

- ``modes`` (``accepted``): empty → the deployment's ``MCP_AUTH``; otherwise only those. ``open``
  lets a caller without credentials in as anonymous. A credential that is presented is still
  verified and used (a key holder gets its key's grant, not anonymous's). Which credentials an
  endpoint takes (``credential_kinds``): those of its modes among ``keys`` and ``oauth``; an
  endpoint whose only mode is ``open`` takes what the deployment verifies (nothing on an open
  deployment: credentials are ignored there, as on ``/mcp`` today). A credential of a kind it
  does not take is refused like an invalid one (401 ``invalid_token``, RFC 6750 §3.1: "invalid
  for other reasons"), with the challenge, so a client tries the endpoint's own way in.
- ``keys`` (``key_allowed``): the public prefixes of the API keys that may use it. Any other valid
  key gets 403 (RFC 6750 §3.1 ``insufficient_scope``: the credential is good, its privileges are
  not enough; RFC 9110 §15.5.4). Not 401: the key authenticated, and a 401 would tell its client
  to sign in again, which cannot help. The refusal names no prefix, and a key that does not
  exist is 401 as on every endpoint, so only the holder of a real key learns that it is real.
- ``scopes`` (``scope_allowed``): an OAuth token needs one of them, or 403 ``insufficient_scope``
  naming them in ``scope`` (MCP authorization, "Scope Challenge Handling", as ``step_up.py``).
- The audience: a token for a virtual server is for its resource URL (``resource_url``:
  ``RESOURCE_URL`` + ``/<slug>``, RFC 8707), exactly. A token for ``/mcp/a`` is refused on
  ``/mcp/b`` and on ``/mcp`` (401 ``invalid_token``: the MCP authorization spec, "Token Audience
  Binding and Validation": servers MUST reject tokens not issued for them).
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from ..endpoints import EndpointSpec

CREDENTIAL_KINDS = ("keys", "oauth")


def deployment_modes(mode: str) -> frozenset[str]:
    """``MCP_AUTH`` (``open``, ``keys``, ``oauth``, ``keys,oauth``) as a set of modes."""
    return frozenset(m for m in mode.replace(" ", "").split(",") if m)


def accepted(spec: EndpointSpec, deployment: frozenset[str]) -> frozenset[str]:
    """The modes the endpoint accepts: its own, or the deployment's when it names none."""
    return spec.access.modes or deployment


def credential_kinds(spec: EndpointSpec, deployment: frozenset[str]) -> frozenset[str]:
    """The kinds of credential the endpoint verifies (see the module docstring)."""
    modes = accepted(spec, deployment)
    kinds = modes.intersection(CREDENTIAL_KINDS)
    if not kinds and "open" in modes:
        return deployment.intersection(CREDENTIAL_KINDS)
    return kinds


def key_allowed(spec: EndpointSpec, prefix: str | None) -> bool:
    keys = spec.access.keys
    return keys is None or (prefix is not None and prefix in keys)


def scope_allowed(spec: EndpointSpec, scopes: Iterable[str]) -> bool:
    wanted = spec.access.scopes
    return wanted is None or not wanted.isdisjoint(scopes)


def resource_url(base: str, spec: EndpointSpec | None) -> str:
    """The canonical URL (RFC 8707 resource, a token's audience) of the endpoint: ``base`` is
    ``RESOURCE_URL``, the catch-all ``/mcp``'s; a virtual server's is below it."""
    return base if spec is None or spec.at_root else f"{base.rstrip('/')}/{spec.slug}"


def metadata_url(resource: str) -> str:
    """RFC 9728 §3.1: the well-known path inserted between the host and the resource's path."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{path}"
