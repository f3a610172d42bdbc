#!/usr/bin/env bash
# Builds a static `ork` for an RK3588 board (aarch64 Linux), to copy to the board as one file:
#
#   scripts/build-board.sh            # prints the path of the binary (build-board/ork)
#
# On an x86-64 machine it cross-compiles with cmake/aarch64-linux-gnu.cmake (installing the cross
# packages first: scripts/setup.sh --aarch64); on an aarch64 machine it builds natively. The binary is
# linked fully static (glibc, libstdc++, PCRE2), so it runs on any aarch64 Linux whatever its libraries.
# BUILD_DIR overrides the build directory; extra arguments go to cmake's configure step.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build-board}"

args=(-DCMAKE_BUILD_TYPE=Release -DORK_STATIC=ON -DORK_BUILD_TESTS=OFF -DORK_BUILD_BENCH=OFF)
case "$(uname -m)" in
  aarch64|arm64)
    "$root/scripts/setup.sh"
    # Natively: the same RK3588 tuning as the cross build.
    args+=(-DCMAKE_CXX_FLAGS="-march=armv8.2-a+dotprod+fp16 -mtune=cortex-a76"
           -DCMAKE_C_FLAGS="-march=armv8.2-a+dotprod+fp16 -mtune=cortex-a76") ;;
  *)
    "$root/scripts/setup.sh" --aarch64
    args+=(-DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake") ;;
esac

cmake -S "$root" -B "$build_dir" -G Ninja "${args[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target ork default_model >&2
bin="$build_dir/ork"
if command -v file >/dev/null; then
  what="$(file -b "$bin")"
  case "$what" in
    *"ARM aarch64"*"statically linked"*) ;;
    *) echo "build-board: $bin is not a static aarch64 executable: $what" >&2; exit 1 ;;
  esac
fi
echo "build-board: copy $bin to the board, and $build_dir/models/default.gguf" \
     "for \`ork run\` without -m" >&2
echo "$bin"
