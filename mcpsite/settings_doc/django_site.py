"""The settings reference's rows for Django itself (its secret, HTTPS, the database), and the
scripts and first-run commands that set up a checkout or a container."""

from __future__ import annotations

from .rows import Section, Text, Var, debug_on_off

DJANGO: Section = (
    "Django, HTTPS and the database",
    "",
    [
        Var(
            "SECRET_KEY",
            Text("a fixed development key"),
            "Django's secret; also keys pagination cursors and (unless `MCP_REQUEST_STATE_KEYS`) the `requestState`. **Set it in production**: with `DJANGO_DEBUG=0` the development key refuses to start.",
        ),
        Var("DJANGO_DEBUG", Text("`1`"), "Django debug mode."),
        Var(
            "DJANGO_ALLOWED_HOSTS",
            Text("`127.0.0.1,localhost,[::1]`"),
            "Django's `ALLOWED_HOSTS` (admin, API). `/mcp` has its own, `MCP_ALLOWED_HOSTS`.",
        ),
        Var(
            "DJANGO_SECURE_SSL_REDIRECT",
            debug_on_off("1"),
            "The admin and the API redirect plain HTTP to https (`/healthz`, `/readyz`, `/metrics` excepted: probes use the private network).",
        ),
        Var(
            "DJANGO_SECURE_HSTS_SECONDS",
            Text("`31536000` when `DJANGO_DEBUG=0`, else `0`"),
            "`Strict-Transport-Security` max-age.",
        ),
        Var(
            "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS",
            debug_on_off("1"),
            "Adds `includeSubDomains` to HSTS.",
        ),
        Var("DJANGO_SECURE_HSTS_PRELOAD", debug_on_off("1"), "Adds `preload` to HSTS."),
        Var(
            "DJANGO_SESSION_COOKIE_SECURE",
            debug_on_off("1"),
            "The admin's session cookie is sent over HTTPS only.",
        ),
        Var("DJANGO_CSRF_COOKIE_SECURE", debug_on_off("1"), "The CSRF cookie is sent over HTTPS only."),
        Var(
            "DJANGO_SECURE_PROXY_SSL_HEADER",
            Text("unset"),
            "A header the TLS proxy always sets (e.g. `X-Forwarded-Proto`) from which Django learns the request was HTTPS. Not needed with the image's uvicorn, which takes the scheme from its trusted balancer (`FORWARDED_ALLOW_IPS`); only for a server that does not, behind a proxy that overwrites the header.",
        ),
        Var(
            "FORWARDED_ALLOW_IPS",
            Text("`127.0.0.1` (uvicorn's; the image's)"),
            "uvicorn's: the addresses whose `X-Forwarded-For`/`-Proto` are believed (`--proxy-headers`). Name the balancer only, never `*`: anyone else could choose the address they are seen and throttled as. Compose sets it to the balancer's fixed address (`MCP_LB_ADDRESS`, default `172.30.80.10` in `MCP_NETWORK_SUBNET`, default `172.30.80.0/24`).",
        ),
        Var(
            "DATABASE_URL",
            Text("`sqlite:///db.sqlite3` (in the checkout)"),
            "The registry database (`postgres://…` in production).",
        ),
        Var(
            "DJANGO_STATIC_ROOT",
            Text("`staticfiles/`"),
            "Where `collectstatic` writes the hashed, compressed static files served when `DJANGO_DEBUG=0`.",
        ),
    ],
)


SCRIPTS: Section = (
    "Scripts and first-run commands",
    "",
    [
        Var("MCP_BIND_HOST", Text("`127.0.0.1`"), "Where `scripts/serve.sh` listens."),
        Var("MCP_BIND_PORT", Text("`8000`"), "The port `scripts/serve.sh` listens on."),
        Var(
            "MCP_DEV_ADMIN_PASSWORD",
            Text("`admin`"),
            "Password of the `admin` user that `scripts/serve.sh` creates when `DJANGO_DEBUG` is on.",
        ),
        Var("MCP_FLEET_WORKERS", Text("`3`"), "`scripts/fleet.sh` default for `--workers`."),
        Var("MCP_FLEET_PORT", Text("a free port"), "`scripts/fleet.sh` default for `--port`."),
        Var(
            "DJANGO_SUPERUSER_USERNAME",
            Text("unset"),
            "With `DJANGO_SUPERUSER_PASSWORD` (and optionally `DJANGO_SUPERUSER_EMAIL`): `manage.py ensure_admin` (compose's `migrate` service) creates this superuser once if it is missing; never resets a password.",
        ),
        Var("DJANGO_SUPERUSER_PASSWORD", Text("unset"), "See `DJANGO_SUPERUSER_USERNAME`."),
        Var("DJANGO_SUPERUSER_EMAIL", Text("empty"), "See `DJANGO_SUPERUSER_USERNAME`."),
    ],
)
