#!/bin/sh
# Copies llama.cpp's own tokenizer test vocabularies and their expected token ids
# (models/ggml-vocab-NAME.gguf with .gguf.inp and .gguf.out: the inputs, and the ids that
# llama.cpp's tests/test-tokenizer-0 checks, made by its tests/test-tokenizer-0.py from the Hugging
# Face tokenizers) from the llama.cpp source inside node-llama-cpp's bundle into
# tests/fixtures/llama_vocab/, where tests/model/llama_vocab_test.cpp reads them.
# Usage: bench/llama_cpp/copy_vocab_fixtures.sh [LLAMA_CPP_DIR]   (default /work/llama.cpp-build,
# as bench/build_llama_cpp.sh makes it; not run by CI: the copies are committed)
set -eu
dir="${1:-/work/llama.cpp-build}"
src="$dir/src/models"
dest="$(cd "$(dirname "$0")/../.." && pwd)/tests/fixtures/llama_vocab"
[ -d "$src" ] || { echo "copy_vocab_fixtures: $src: no such directory (run bench/build_llama_cpp.sh)" >&2; exit 1; }
mkdir -p "$dest"
# The families ork's architectures use. qwen35 has its own .inp/.out but shares qwen2's vocabulary
# (the files differ in tokenizer.ggml.pre only): the test loads qwen2's with the qwen35 pre-tokenizer.
for name in llama-spm llama-bpe phi-3 gpt-2 qwen2 deepseek-coder; do
  cp "$src/ggml-vocab-$name.gguf" "$src/ggml-vocab-$name.gguf.inp" "$src/ggml-vocab-$name.gguf.out" "$dest/"
done
cp "$src/ggml-vocab-qwen35.gguf.inp" "$src/ggml-vocab-qwen35.gguf.out" "$dest/"
commit=$(git -C "$dir/src" rev-parse HEAD)
printf 'llama.cpp source: node-llama-cpp 3.21.1 bundle, commit %s (models/ggml-vocab-*)\n' "$commit" > "$dest/SOURCE"
echo "copied into $dest"
