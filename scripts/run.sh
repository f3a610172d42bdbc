#!/usr/bin/env bash
# Sets up, builds, and runs generation on the default model (models/tiny-fortunes.gguf). Arguments
# are passed to `ork run` (default: a short prompt, 48 new tokens, on the simulated NPU).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
BUILD_TARGETS="ork default_model" "$root/scripts/build.sh" >/dev/null
if [ $# -eq 0 ]; then
  set -- -p "The best thing about a computer is" -n 48 --device sim
fi
exec "$root/build/ork" run "$@"
