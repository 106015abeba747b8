"""The settings reference's rows for who may call /mcp (keys, tokens, limits), the built-in OAuth
authorization server, and the audit log."""

from __future__ import annotations

from .rows import Section, Text, Var, access, mcp, oauth_server

AUTHENTICATION: Section = (
    "Authentication and limits",
    'See [Authentication](../guides/auth.md). These fill `MCP["ACCESS"]`.',
    [
        Var(
            "MCP_AUTH",
            access("MODE"),
            "Who may call `/mcp`: `open` (no credentials; development), `keys` (API keys), `oauth` (JWT access tokens), `keys,oauth`. A system check refuses `open` with `DJANGO_DEBUG=0` and a non-loopback allowed host.",
        ),
        Var(
            "MCP_RESOURCE_URL",
            access("RESOURCE_URL"),
            "The canonical URL of `/mcp`: the audience tokens must carry (RFC 8707) and the base of the RFC 9728 metadata URL.",
        ),
        Var(
            "MCP_OAUTH_ISSUER",
            access("OAUTH_ISSUER"),
            "`oauth`: the authorization server's issuer (`iss` of its tokens); required with `oauth`. `self`: this server's own ([Built-in authorization server](../guides/oauth-server.md)).",
        ),
        Var(
            "MCP_OAUTH_JWKS_URL",
            Text("`<issuer>/.well-known/jwks.json`"),
            "`oauth`: where its signing keys are fetched (cached 10 min; refetched for an unknown `kid`).",
        ),
        Var(
            "MCP_OAUTH_JWKS_SOURCE",
            access("OAUTH_JWKS_SOURCE"),
            "`oauth`: dotted path of a callable `(url, timeout) -> JWKS bytes` used instead of an HTTP GET of the JWKS URL (with `MCP_OAUTH_ISSUER=self`, the built-in server's key set, read in-process).",
        ),
        Var(
            "MCP_OAUTH_JWKS_MIN_REFRESH",
            access("OAUTH_JWKS_MIN_REFRESH"),
            "`oauth`: least seconds between two JWKS fetches caused by unknown `kid`s.",
        ),
        Var(
            "MCP_OAUTH_ALGORITHMS",
            access("OAUTH_ALGORITHMS"),
            "`oauth`: accepted signature algorithms (asymmetric only: `none` and `HS*` are refused by a system check). A JWK published with `alg` verifies that algorithm only (RFC 8725 §3.1).",
        ),
        Var(
            "MCP_OAUTH_REQUIRE_TYP",
            access("OAUTH_REQUIRE_TYP"),
            "`oauth`: `1` refuses tokens whose header is not `typ: at+jwt` (RFC 9068 §4; for issuers that type their access tokens). A token typed otherwise than `at+jwt` (or untyped `JWT`) is refused either way.",
        ),
        Var(
            "MCP_OAUTH_SCOPES",
            access("OAUTH_SCOPES"),
            '`oauth`: JSON, each scope → the grant it gives (`{"tools": [...], "resources": [...], "prompts": [...], "tags": [...]}`; `{}` = everything). A token gets the union of its scopes\' grants; none → 403 `insufficient_scope`.',
        ),
        Var(
            "MCP_RATE_LIMIT",
            access("RATE"),
            "`N/S`: requests per principal (N per S seconds, burst N); a key's own rate overrides it. Shared through Redis when `REDIS_URL` is set.",
        ),
        Var(
            "MCP_TOOL_RATE_LIMIT",
            access("TOOL_RATE"),
            "`N/S`: calls per principal and tool; a key's own tool rate overrides it.",
        ),
        Var(
            "MCP_TOOL_RATE_LIMITS",
            access("TOOL_RATES"),
            'JSON `{"tool": "N/S"}`: per-tool rates (per principal) overriding the two above.',
        ),
        Var(
            "MCP_MAX_IN_FLIGHT",
            access("MAX_IN_FLIGHT"),
            "Cap on one principal's requests running at once, per worker.",
        ),
    ],
)


AUTHORIZATION_SERVER: Section = (
    "The built-in authorization server",
    "On with `MCP_OAUTH_ISSUER=self`; see [Built-in authorization server](../guides/oauth-server.md).",
    [
        Var(
            "MCP_OAUTH_DCR",
            oauth_server("DCR"),
            "RFC 7591 registration at `/oauth/register/` (deprecated by the 2026-07-28 spec, still what most clients do).",
        ),
        Var(
            "MCP_OAUTH_CIMD",
            oauth_server("CIMD"),
            "Client ID Metadata Documents: fetched over HTTPS from public addresses only, 16 KB, 5 s, cached per `Cache-Control` (5 min to 1 day), `client_id` equal to the URL.",
        ),
        Var(
            "MCP_OAUTH_CIMD_ALLOW_PRIVATE",
            oauth_server("CIMD_ALLOW_PRIVATE"),
            "Development only: documents on loopback/private addresses too (a system check warns with `DJANGO_DEBUG=0`).",
        ),
        Var(
            "MCP_OAUTH_ACCESS_TOKEN_SECONDS",
            oauth_server("ACCESS_TOKEN_SECONDS"),
            "Access token lifetime.",
        ),
        Var(
            "MCP_OAUTH_REFRESH_TOKEN_SECONDS",
            oauth_server("REFRESH_TOKEN_SECONDS"),
            "Refresh token lifetime after its access token's expiry.",
        ),
        Var("MCP_OAUTH_CODE_SECONDS", oauth_server("CODE_SECONDS"), "Authorization code lifetime."),
        Var(
            "MCP_OAUTH_SIGNING_ALGORITHM",
            oauth_server("ALGORITHM"),
            "`ES256`, `RS256` or `PS256`, for new keys.",
        ),
        Var(
            "MCP_OAUTH_SIGNING_KEYS",
            oauth_server("SIGNING_KEYS"),
            "Signing keys from the environment instead of the database: PKCS#8 PEM blocks (EC P-256 or RSA), the first signs, all are published; rotate by putting a new key first.",
        ),
        Var(
            "MCP_OAUTH_KEY_PUBLISH_SECONDS",
            oauth_server("KEY_PUBLISH_SECONDS"),
            "A new key is in the JWKS this long before it signs (every worker learns it first).",
        ),
        Var(
            "MCP_OAUTH_TOKEN_RATE",
            oauth_server("TOKEN_RATE"),
            "`N/S` per client address on the token and revocation endpoints; over it, 429 with `Retry-After`.",
        ),
        Var(
            "MCP_OAUTH_REGISTRATION_RATE",
            oauth_server("REGISTRATION_RATE"),
            "`N/S` per client address on the registration endpoint; over it, 429 with `Retry-After`.",
        ),
        Var(
            "MCP_OAUTH_SIGN_IN_RATE",
            oauth_server("SIGN_IN_RATE"),
            "`N/S` failed sign-ins per account (the username typed) at `/oauth/login/` and `/admin/login/`; over it, 429 with `Retry-After` until the window ends.",
        ),
        Var(
            "MCP_OAUTH_SIGN_IN_ADDRESS_RATE",
            oauth_server("SIGN_IN_ADDRESS_RATE"),
            "`N/S` failed sign-ins per client address at `/oauth/login/` and `/admin/login/`; over it, 429 with `Retry-After`.",
        ),
        Var(
            "MCP_OAUTH_EXCHANGE_CLIENTS",
            Text("empty: no client"),
            "Comma-separated client ids of the confidential clients that may use RFC 8693 token exchange at the token endpoint, for the upstream resources registered as exchange targets ([Token exchange](../guides/oauth-server.md#token-exchange-rfc-8693)); empty: the grant is refused and not advertised.",
        ),
    ],
)


AUDIT_LOG: Section = (
    "The audit log",
    "See [Authentication](../guides/auth.md#the-audit-log).",
    [
        Var(
            "MCP_AUDIT",
            Text("`1`"),
            "Audit log of tool calls, resource reads and prompt gets (admin → Audit records).",
        ),
        Var(
            "MCP_AUDIT_RETENTION_DAYS",
            Text("`90`"),
            "Days of audit records, and of closed staff approvals, `manage.py prune_audit` keeps (at least 1).",
        ),
        Var(
            "MCP_AUDIT_SINK",
            Text("`redis` with `REDIS_URL`, else `database`"),
            "Where workers put audit entries: `database` (a thread of each worker inserts them) or `redis` (appended to a Redis stream; `manage.py drain_audit` writes them to the database).",
        ),
        Var(
            "MCP_AUDIT_REDIS_URL",
            Text("`REDIS_URL`"),
            "The spool's Redis (same `MCP_REDIS_MODE`); e.g. a Redis with persistence, so a restart keeps what waits.",
        ),
        Var(
            "MCP_AUDIT_SPOOL_MAX_ENTRIES",
            Text("`100000`"),
            'Entries the spool holds at most (undrained); beyond it the newest are dropped and counted in `mcp_audit_dropped_total{reason="sink_full"}`. About 0.3 KB an entry, up to ~4.3 KB with capped arguments.',
        ),
    ],
)


APPROVALS: Section = (
    "Approvals",
    "See [Approvals](../guides/approvals.md).",
    [
        Var(
            "MCP_APPROVAL_DESTRUCTIVE_DEFAULT",
            Text("`none`"),
            "The approval policy of a tool annotated `destructiveHint: true` whose own policy is blank: `none`, `confirm` (the user is asked by a form elicitation) or `staff` (a decision in the approval queue). Any other value stops start-up (`registry.E010`).",
        ),
        Var(
            "MCP_APPROVAL_TIMEOUT_SECONDS",
            mcp("APPROVAL_TIMEOUT_SECONDS"),
            "How long a call of a `staff` tool waits for a decision; then it ends with `isError` and the approval is closed as expired.",
        ),
    ],
)


CONNECTIONS: Section = (
    "Connections (acting for the user)",
    "See [Connections](../guides/connections.md).",
    [
        Var(
            "CONNECTIONS_VAULT_KEYS",
            Text("unset (the vault is locked: the connect page and calls as the user say so)"),
            "Comma-separated Fernet keys (`Fernet.generate_key()`) encrypting the users' tokens at rest. The first key encrypts, every key decrypts: to rotate, put the new key first, restart the workers, run `manage.py rotate_vault_keys`, then drop the old key. A value holding no valid key stops start-up (`connections.E001`). Read from the environment only, never from a settings file or the database.",
        ),
    ],
)
