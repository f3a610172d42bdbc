#!/usr/bin/env bash
# Configures and builds ork into BUILD_DIR (default: build/). Extra arguments go to cmake's configure
# step, e.g. scripts/build.sh -DORK_SANITIZE=address,undefined with BUILD_DIR=build-asan.
# BUILD_TARGETS (space-separated) builds only those targets.
# When ccache is installed (scripts/setup.sh installs it) compilations go through it, with the
# checkout's root as its base directory, so fresh clones of the same sources reuse each other's
# objects; ORK_CCACHE=0 turns it off (a cold build).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
launcher=()
if [ "${ORK_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  # The settings are part of the launcher, so a later `cmake --build` of the same directory (without
  # this script's environment) compiles the same way and shares the objects too.
  ccache_launcher="env;CCACHE_BASEDIR=$root;CCACHE_NOHASHDIR=1;ccache"
  launcher=("-DCMAKE_C_COMPILER_LAUNCHER=$ccache_launcher" "-DCMAKE_CXX_COMPILER_LAUNCHER=$ccache_launcher")
else
  launcher=(-UCMAKE_C_COMPILER_LAUNCHER -UCMAKE_CXX_COMPILER_LAUNCHER)
fi
cmake -S "$root" -B "$build_dir" -G Ninja "${launcher[@]}" "$@" >/dev/null
# shellcheck disable=SC2086
cmake --build "$build_dir" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
