#!/bin/sh
# Regenerates llama.cpp's character classes for ork's pre-tokenizer: src/model/unicode_classes_data.cpp
# (the tables ork compiles in) and tests/fixtures/llama_unicode/classes.txt (the same ranges as text,
# which tests/model/unicode_classes_test.cpp checks every code point against). Both come from
# llama.cpp's unicode_cpt_flags_from_cpt (src/unicode.cpp over src/unicode-data.cpp, Unicode 15.1; MIT),
# compiled here from the llama.cpp source. Not run by CI: the outputs are committed.
# usage: bench/llama_cpp/make_unicode_classes.sh [LLAMA_CPP_DIR]   (default /work/llama.cpp-build, as
#        bench/build_llama_cpp.sh makes it; only its src/ is read)
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
llama="${1:-/work/llama.cpp-build}"
src="$llama/src/src"
[ -f "$src/unicode-data.cpp" ] || { echo "make_unicode_classes: $src/unicode-data.cpp: no such file" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
g++ -O1 -std=c++17 -I"$src" -I"$llama/src/include" -I"$llama/src/ggml/include" \
  "$root/bench/llama_cpp/unicode_classes.cpp" "$src/unicode.cpp" "$src/unicode-data.cpp" -o "$tmp/unicode_classes"
mkdir -p "$root/tests/fixtures/llama_unicode"
"$tmp/unicode_classes" "$root/tests/fixtures/llama_unicode/classes.txt" "$root/src/model/unicode_classes_data.cpp"
commit=$(git -C "$llama/src" rev-parse HEAD 2>/dev/null || echo unknown)
printf 'llama.cpp source: node-llama-cpp 3.21.1 bundle, commit %s (src/unicode.cpp, src/unicode-data.cpp)\n' "$commit" \
  > "$root/tests/fixtures/llama_unicode/SOURCE"
echo "wrote src/model/unicode_classes_data.cpp and tests/fixtures/llama_unicode/"
