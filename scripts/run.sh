#!/usr/bin/env bash
# Sets up, builds, and runs generation on the default model. Arguments are passed to `ork run`
# (default: a short prompt and 48 new tokens).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" >/dev/null
if [ $# -eq 0 ]; then
  set -- -p "Once upon a time" -n 48
fi
exec "$root/build/ork" run "$@"
