#!/usr/bin/env bash
# Configures and builds ork into BUILD_DIR (default: build/). Extra arguments go to cmake's configure
# step, e.g. scripts/build.sh -DORK_SANITIZE=address,undefined with BUILD_DIR=build-asan.
# BUILD_TARGETS (space-separated) builds only those targets.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build_dir" -G Ninja "$@" >/dev/null
# shellcheck disable=SC2086
cmake --build "$build_dir" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
