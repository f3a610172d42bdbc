#!/usr/bin/env bash
# Builds llama.cpp's llama-bench, llama-quantize and llama-perplexity (CPU only) from the source that
# the npm package node-llama-cpp@3.21.1 ships as a git bundle (llama/gitRelease.bundle), into DIR.
# The package is installed where bench/compare_llama_cpp.sh installs it (build/llama-cpp-bench).
# For benchmarks and for making mixed GGUF files with llama-quantize; never run from CI.
# Prints the built llama.cpp's version (its build number and commit) at the end.
# usage: bench/build_llama_cpp.sh DIR [JOBS=2]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:?usage: bench/build_llama_cpp.sh DIR [JOBS]}"
jobs="${2:-2}"
command -v node >/dev/null && command -v npm >/dev/null ||
  { echo "build_llama_cpp: needs node and npm (sudo apt-get install nodejs npm)" >&2; exit 1; }
npm_dir="$root/build/llama-cpp-bench"
if [ ! -d "$npm_dir/node_modules/node-llama-cpp" ]; then
  mkdir -p "$npm_dir"
  cp "$root/bench/llama_cpp/package.json" "$npm_dir/"
  (cd "$npm_dir" && npm install --no-audit --no-fund >&2)
fi
bundle="$npm_dir/node_modules/node-llama-cpp/llama/gitRelease.bundle"
[ -f "$bundle" ] || { echo "build_llama_cpp: $bundle: no such file" >&2; exit 1; }
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
src="$dest/src"
if [ ! -d "$src/.git" ]; then
  rm -rf "$src"
  git clone --quiet "$bundle" "$src"
fi
# LLAMA_BUILD_NUMBER / LLAMA_BUILD_COMMIT come from the bundle's git history (cmake/build-info.cmake).
cmake -S "$src" -B "$dest/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
  -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_OPENMP=ON -DLLAMA_CURL=OFF \
  -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF >&2
cmake --build "$dest/build" -j "$jobs" --target llama-bench llama-quantize llama-perplexity >&2
for t in llama-bench llama-quantize llama-perplexity; do
  ln -sf "build/bin/$t" "$dest/$t"
done
# The bundle is one squashed commit, so llama.cpp's own build number (a commit count) reads 1; the
# release it was cut from is named in node-llama-cpp's llama/llama.cpp.info.json.
info="$npm_dir/node_modules/node-llama-cpp/llama/llama.cpp.info.json"
tag="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tag"])' "$info" 2>/dev/null || echo unknown)"
echo "llama.cpp release $tag (node-llama-cpp's llama.cpp.info.json), bundle commit $(git -C "$src" rev-parse HEAD)"
