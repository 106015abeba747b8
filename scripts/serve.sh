#!/usr/bin/env bash
# The README's first command: install, migrate, load the demo registry on first run, create a
# development admin, and serve /mcp on 127.0.0.1:8000 (SQLite, in-process stores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh serve  # the server only: the test extras are for scripts/test.sh
export DJANGO_SETTINGS_MODULE=mcpsite.settings
.venv/bin/python manage.py migrate --noinput >/dev/null
.venv/bin/python manage.py load_demo --if-empty
.venv/bin/python manage.py ensure_dev_admin
HOST=${MCP_BIND_HOST:-127.0.0.1}
PORT=${MCP_BIND_PORT:-8000}
echo "MCP endpoint:  http://$HOST:$PORT/mcp"
echo "Admin:         http://$HOST:$PORT/admin/   (login above)"
echo "Home page:     http://$HOST:$PORT/   (live counts, these configurations)"
.venv/bin/python -m mcpsite.clients "http://$HOST:$PORT/mcp"
echo
exec .venv/bin/uvicorn mcpsite.asgi:application --host "$HOST" --port "$PORT" --no-access-log
