#!/usr/bin/env bash
# The README's second command: install everything (Python packages, node 22 and the official
# conformance suite), make sure Redis is up, then lint and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh test
bash scripts/install-tools.sh
# Debian packages the ops tests drive: nginx (the fleet's balancer) and chromium (the browser
# test; Playwright cannot download a browser of its own here). Installed as root when missing.
missing=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
  else
    echo "test.sh: ${missing[*]} missing and not root: the tests that need them are skipped" >&2
  fi
fi
redis_up() { (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; }
if ! redis_up; then
  if command -v redis-server >/dev/null; then
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
    for _ in $(seq 50); do redis_up && break; sleep 0.1; done
  else
    echo "test.sh: no Redis on 127.0.0.1:6379 and no redis-server to start: the Redis tests are skipped" >&2
  fi
fi
# The project byte-compiled once: where PYTHONDONTWRITEBYTECODE is set (this CI machine's
# environment), every server and management command the tests start (several hundred) would
# compile it again, some half a second each.
.venv/bin/python -m compileall -q -j 0 access connections management_api mcp_django mcp_protocol \
  mcpsite oauth_server registry tests/support examples >/dev/null
.venv/bin/ruff check .
.venv/bin/mypy
# The layers and the core's independence from Django ([tool.importlinter] in pyproject.toml).
.venv/bin/lint-imports
# The docs site (mkdocs.yml, strict): a broken link, anchor or page left out of the nav fails here.
site=$(mktemp -d)
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site"
rm -rf "$site"
# Django 6.0 on Python 3.12: the apps' unit tests and the example project's check/migrate.
bash scripts/test-django6.sh
# Two workers on this 2-core machine; integration modules each share one server process.
exec .venv/bin/pytest -n 2 --dist loadfile "$@"
