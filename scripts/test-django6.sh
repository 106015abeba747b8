#!/usr/bin/env bash
# A short second run on Django 6.0 (Python 3.12; the main suite runs the pinned Django 5.2 LTS on
# 3.11): the apps' unit tests, then the example project's check and migrate against the apps.
# Its own venv, .venv-dj6: every pin of pyproject.toml but Django's, plus the test tools the
# subset needs. Skipped, with a message, when no Python 3.12 is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
DJANGO6=django==6.0.10
is312() { [ -n "$1" ] && "$1" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; }
PY=${PYTHON312:-}
# pyenv's installs first: its python3.12 shim on PATH fails when 3.12 is not the selected version.
for candidate in "$HOME"/.pyenv/versions/3.12.*/bin/python "$(command -v python3.12 || true)"; do
  is312 "$PY" && break
  PY=$candidate
done
if ! is312 "$PY"; then
  echo "test-django6.sh: no Python 3.12 found (set PYTHON312): the Django 6.0 run is skipped" >&2
  exit 0
fi
[ -x .venv-dj6/bin/python ] || "$PY" -m venv .venv-dj6
stamp=.venv-dj6/.installed-$(cat pyproject.toml "$0" | sha1sum | cut -c1-12)
if [ ! -f "$stamp" ]; then
  # The project's pins with Django's replaced; the project itself without dependencies.
  .venv-dj6/bin/python - "$DJANGO6" > .venv-dj6/requirements.txt <<'PY'
import sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
# Every test pin the unit tests may import; not the linters.
unwanted = ("ruff", "mypy")
extras = project["optional-dependencies"]
test = []
for r in extras["test"]:
    if r.startswith("mcpsite["):  # an extra of our own (the test extra takes "otel"): its pins
        test += [p for name in r[len("mcpsite["):-1].split(",") for p in extras[name.strip()]]
    elif r.split("==")[0] not in unwanted:
        test.append(r)
pins = [sys.argv[1] if r.split("==")[0] == "django" else r for r in project["dependencies"]]
print("\n".join(pins + test))
PY
  .venv-dj6/bin/python -m pip install --quiet --upgrade pip
  .venv-dj6/bin/python -m pip install --quiet -r .venv-dj6/requirements.txt
  .venv-dj6/bin/python -m pip install --quiet --no-deps -e .
  rm -f .venv-dj6/.installed-* && touch "$stamp"
fi
.venv-dj6/bin/python -c 'import django, sys; print(f"Django {django.get_version()} on Python {sys.version.split()[0]}")'
.venv-dj6/bin/pytest tests/unit -q -p no:cacheprovider -x -n 2
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
(cd examples/shopdesk && DJANGO_SETTINGS_MODULE=shopdesk.settings DATABASE_URL="sqlite:///$db/shopdesk.sqlite3" \
  ../../.venv-dj6/bin/python manage.py check --fail-level WARNING \
  && DJANGO_SETTINGS_MODULE=shopdesk.settings DATABASE_URL="sqlite:///$db/shopdesk.sqlite3" \
  ../../.venv-dj6/bin/python manage.py migrate --noinput -v 0 \
  && DJANGO_SETTINGS_MODULE=shopdesk.settings DATABASE_URL="sqlite:///$db/shopdesk.sqlite3" \
  ../../.venv-dj6/bin/python manage.py check --database default --fail-level WARNING)
echo "test-django6.sh: Django 6.0 run passed"
