#!/bin/sh
# Regenerates tests/fixtures/ggml_dequant/: blocks of every GGUF type ork decodes and ggml's own
# dequantization of them (bench/llama_cpp/dequant_blocks.cpp says what the blocks hold), for
# tests/quant/ggml_dequant_oracle_test.cpp. Not run by CI (it needs a llama.cpp build): the fixtures are
# committed; run it after changing the generator.
# usage: bench/llama_cpp/make_dequant_fixtures.sh [LLAMA_CPP_DIR]   (default /work/llama.cpp-build, as
#        bench/build_llama_cpp.sh makes it; only its static libggml-base is linked, under flock on
#        LLAMA_CPP_DIR/.lock since another build may be running there)
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
llama="${1:-/work/llama.cpp-build}"
out="$root/tests/fixtures/ggml_dequant"
base="$llama/build/ggml/src/libggml-base.a"
[ -f "$base" ] || { echo "make_dequant_fixtures: $base: no such file (run bench/build_llama_cpp.sh)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
flock "$llama/.lock" g++ -O2 -std=c++17 "$root/bench/llama_cpp/dequant_blocks.cpp" \
  -I"$llama/src/ggml/include" "$base" -fopenmp -lm -lpthread -o "$tmp/dequant_blocks"
mkdir -p "$out"
"$tmp/dequant_blocks" "$out"
commit=$(git -C "$llama/src" rev-parse HEAD 2>/dev/null || echo unknown)
printf 'ggml (llama.cpp source: node-llama-cpp 3.21.1 bundle, commit %s), written by bench/llama_cpp/make_dequant_fixtures.sh\n' "$commit" > "$out/SOURCE"
echo "wrote $out"
