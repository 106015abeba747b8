"""Who may call what on ``/mcp`` (issue 11). Django-free; an app supplies the database side
(``KeySource``, ``AuditSink``: this project's ``access`` app), the adapter (``mcp_django/conf.py``)
builds the policy from settings, and ``transports/auth.py`` is the HTTP side.

- ``principal.py``  ``Principal`` (who), ``Grant`` (what), ``Rate``; the request's current principal
- ``scopes.py``     the snapshot a grant sees, cached per (snapshot, grant)
- ``keys.py``       API key tokens and the per-worker ``KeyRing`` (no query per request)
- ``oauth.py``      JWT access tokens against the authorization server's JWKS
- ``limits.py``     token buckets (memory, Redis) and the in-flight cap
- ``audit.py``      the audit queue: bounded, batched, redacted
- ``guard.py``      the core's interceptor: limits and audit around each call
- ``endpoint_access.py``  a virtual server's own access (modes, keys, scopes, audience)
- ``policy.py``     ``AccessPolicy``: all of it together; ``authenticate`` per ``MCP_AUTH`` and
  per virtual server

Refusals::

    AuthError               401 (no or bad credentials) / 403 (insufficient_scope; a key off a
                            virtual server's list), with a challenge
    oauth.InvalidToken      → AuthError 401 error="invalid_token"
    oauth.InsufficientScope → AuthError 403 error="insufficient_scope"
    guard.RateLimited       MCPError -32000, data.retryAfter (tools/call: an isError result instead)
"""
