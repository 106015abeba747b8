#!/usr/bin/env bash
# The README's second command: install everything (Python packages, node 22 and the official
# conformance suite), make sure Redis is up, then lint and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/install-tools.sh
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  for _ in $(seq 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.1; done
fi
.venv/bin/ruff check .
.venv/bin/mypy
# Two workers on this 2-core machine; integration modules each share one server process.
exec .venv/bin/pytest -n 2 --dist loadfile "$@"
