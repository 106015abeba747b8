#!/usr/bin/env bash
# A fleet on this machine: N uvicorn workers on loopback behind nginx (round robin, no affinity),
# sharing REDIS_URL (default the local Redis) and DATABASE_URL (default SQLite db.sqlite3; use
# PostgreSQL for real load). Installs Debian's nginx when missing (as root). Every file goes under
# a temporary prefix (--dir to choose it). See docs/guides/scaling.md "Fleet on one machine".
#   bash scripts/fleet.sh --workers 3 [--port 8080]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y nginx >/dev/null || { apt-get update -qq && apt-get install -y nginx >/dev/null; }
  else
    echo "fleet.sh: nginx is not installed; as root: apt-get install -y nginx" >&2
    exit 1
  fi
fi
export DJANGO_SETTINGS_MODULE=mcpsite.settings
.venv/bin/python manage.py migrate --noinput >/dev/null
.venv/bin/python manage.py load_demo --if-empty
.venv/bin/python manage.py ensure_dev_admin
exec .venv/bin/python -m mcpsite.fleet "$@"
