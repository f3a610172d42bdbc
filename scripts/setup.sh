#!/usr/bin/env bash
# Installs what building and testing ork needs, from Debian's packages only. Idempotent: installs
# only what is missing. Needs root (or sudo) when something is missing.
#   --train     also what tools/train_tiny (retraining the default model) needs: PyTorch, NumPy,
#               the regex module, an optimized BLAS, and the fortunes corpus. Not installed by default.
#   --aarch64   also the aarch64 cross build (cmake/aarch64-linux-gnu.cmake, docs/aarch64.md): Debian's
#               cross compiler, user-mode qemu, and the arm64 multiarch libraries (enabling dpkg's
#               arm64 architecture when needed). Nothing extra on an arm64 machine.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config libpcre2-dev libgtest-dev libgmock-dev libbenchmark-dev
          libcpp-httplib-dev nlohmann-json3-dev curl ccache)
add_arch=0
for arg in "$@"; do
  case "$arg" in
    --train)
      # libopenblas0-openmp: Debian's python3-torch uses the system libblas.so.3, which is the slow
      # reference BLAS unless an optimized one is installed.
      packages+=(python3-torch python3-numpy python3-regex libopenblas0-openmp fortunes fortunes-min) ;;
    --aarch64)
      if [ "$(dpkg --print-architecture)" != arm64 ]; then
        # libstdc++6:arm64 gives qemu one consistent set of target run-time libraries
        # (cmake/aarch64-linux-gnu.cmake says why that matters).
        packages+=(g++-aarch64-linux-gnu qemu-user libstdc++6:arm64 libpcre2-dev:arm64
                   libgtest-dev:arm64 libgmock-dev:arm64)
        dpkg --print-foreign-architectures | grep -qx arm64 || add_arch=1
      fi ;;
    *) echo "setup: unknown option '$arg' (known: --train, --aarch64)" >&2; exit 2 ;;
  esac
done

# node and npm for the npm-client test of ork serve (tests/serve/npm_clients_test.sh), unless some
# node with npm is installed already (e.g. a nodejs package that bundles npm).
command -v npm >/dev/null && command -v node >/dev/null || packages+=(nodejs npm)
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
if [ "$add_arch" -eq 1 ]; then
  echo "setup: enabling the arm64 architecture (dpkg --add-architecture arm64)" >&2
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
fi
"${sudo_cmd[@]}" apt-get update -q >/dev/null
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
