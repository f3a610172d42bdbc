#!/usr/bin/env bash
# The official openai and ollama npm clients (pinned in tests/serve/npm/package.json and
# package-lock.json) against a real `ork serve` on loopback: tests/serve/npm/clients_test.mjs.
# The packages are installed with `npm ci` into BUILD_DIR/npm-clients (again only when the lock file
# changed). Skipped, saying so, when node or npm is not installed; a failing `npm ci` (no registry)
# is a failure. Usage: npm_clients_test.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
src="$(cd "$(dirname "$0")/npm" && pwd)"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "npm_clients_test: SKIPPED: node or npm is not installed (scripts/setup.sh installs them)" >&2
  exit 0
fi
dir="$build/npm-clients"
mkdir -p "$dir"
if ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" || [ ! -d "$dir/node_modules" ]; then
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2) ||
    { echo "npm_clients_test: npm ci failed in $dir (is the npm registry reachable?)" >&2; exit 1; }
fi
cp "$src/clients_test.mjs" "$dir/"

tmp="$(mktemp -d)"
"$build/ork" serve --host 127.0.0.1 --port 0 --parallel 2 --ctx 1024 -t 1 >"$tmp/port" 2>"$tmp/err" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 1 600); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || { echo "npm_clients_test: ork serve did not start: $(cat "$tmp/err")" >&2; exit 1; }
port="$(head -1 "$tmp/port")"
ORK_URL="http://127.0.0.1:$port" timeout 120 node "$dir/clients_test.mjs"
