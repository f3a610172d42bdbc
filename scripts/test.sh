#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: a release build, then the same tests built with
# AddressSanitizer and UndefinedBehaviorSanitizer, then the threaded tests under ThreadSanitizer.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jobs="$(nproc)"
"$root/scripts/setup.sh"

echo "== release build and tests" >&2
BUILD_DIR="$root/build" "$root/scripts/build.sh"
ctest --test-dir "$root/build" -j "$jobs" --output-on-failure

echo "== AddressSanitizer + UndefinedBehaviorSanitizer" >&2
BUILD_DIR="$root/build-asan" "$root/scripts/build.sh" -DCMAKE_BUILD_TYPE=Debug \
  -DORK_SANITIZE=address,undefined -DORK_BUILD_BENCH=OFF
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$root/build-asan" -j "$jobs" --output-on-failure -LE slow

echo "== ThreadSanitizer (tests labelled 'threads')" >&2
BUILD_DIR="$root/build-tsan" "$root/scripts/build.sh" -DCMAKE_BUILD_TYPE=Debug \
  -DORK_SANITIZE=thread -DORK_BUILD_BENCH=OFF
ctest --test-dir "$root/build-tsan" -j "$jobs" --output-on-failure --no-tests=error -R "${ORK_TSAN_TESTS:-ThreadPool|Concurrent|Threads}"
