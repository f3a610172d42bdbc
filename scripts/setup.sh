#!/usr/bin/env bash
# Installs what building and testing ork needs, from Debian's packages only. Idempotent: installs
# only what is missing. Needs root (or sudo) when something is missing.
#   --train   also what tools/train_tiny (retraining the default model) needs: PyTorch, NumPy,
#             the regex module, an optimized BLAS, and the fortunes corpus. Not installed by default.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config libpcre2-dev libgtest-dev libgmock-dev libbenchmark-dev)
for arg in "$@"; do
  case "$arg" in
    --train)
      # libopenblas0-openmp: Debian's python3-torch uses the system libblas.so.3, which is the slow
      # reference BLAS unless an optimized one is installed.
      packages+=(python3-torch python3-numpy python3-regex libopenblas0-openmp fortunes fortunes-min) ;;
    *) echo "setup: unknown option '$arg' (known: --train)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q >/dev/null
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
