#!/usr/bin/env bash
# Regenerates tests/fixtures/llama_cpp_greedy/: llama.cpp's greedy tokens (and its logits of the last
# prompt position) on models that ork-gen-model generates, for tests/runtime/llama_cpp_oracle_test.cpp
# to check ork against. Not run by CI (it needs a llama.cpp build); run it after changing a case or
# the generator, and commit the fixtures it writes.
#
# usage: [ORACLE_ONLY=REGEX] bench/oracle_greedy.sh [LLAMA_CPP_DIR]   (default /work/llama.cpp-build: src/ and build/, as
#        bench/build_llama_cpp.sh makes them; only its static libllama/libggml are used)
# Needs ork-gen-model in $BUILD_DIR (default build/). Compiles bench/llama_cpp/greedy_tokens.cpp into
# $BUILD_DIR/oracle/, linking under flock on LLAMA_CPP_DIR/.lock (another build may be running there).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
llama="${1:-/work/llama.cpp-build}"
build="${BUILD_DIR:-$root/build}"
out="$root/tests/fixtures/llama_cpp_greedy"
gen="$build/ork-gen-model"
[ -x "$gen" ] || { echo "oracle_greedy: $gen not built (cmake --build build --target ork-gen-model)" >&2; exit 1; }
mkdir -p "$build/oracle" "$out"
tool="$build/oracle/greedy_tokens"
flock "$llama/.lock" g++ -O2 -std=c++17 "$root/bench/llama_cpp/greedy_tokens.cpp" \
  -I"$llama/src/include" -I"$llama/src/ggml/include" \
  "$llama/build/src/libllama.a" "$llama/build/ggml/src/libggml.a" "$llama/build/ggml/src/libggml-cpu.a" \
  "$llama/build/ggml/src/libggml-base.a" -fopenmp -lpthread -ldl -o "$tool"
# The llama.cpp version: the commit of its source tree and the build number its build recorded.
commit="$(git -C "$llama/src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
number="$(sed -n 's/^int LLAMA_BUILD_NUMBER = \([0-9]*\);/\1/p' "$llama/build/common/build-info.cpp" 2>/dev/null || echo unknown)"
version="llama.cpp commit $commit (build number $number; node-llama-cpp's bundled source)"

prompt="1,17,42,300,5,99,123,77,8,250,31,64"
n_predict=20
# name | ork-gen-model flags | n_ctx requested (llama.cpp pads it to a multiple of 256) [| llama-quantize type]
# A case with a llama-quantize type is generated in f32 and quantized by llama.cpp's own
# llama-quantize (LLAMA_CPP_DIR/llama-quantize) into the mix people download; that file is kept
# beside the fixture (NAME.gguf, committed: ork's tests cannot run llama-quantize) and named in it.
cases=(
  "llama_f32|--preset tiny-llama|64"
  "gemma2_f32|--preset tiny-gemma2|64"
  "gemma2_q8_0|--preset tiny-gemma2 --type q8_0 --seed 3|64"
  "gemma3_f32|--preset tiny-gemma3|64"
  "gemma3_untied_q4_k|--preset tiny-gemma3 --untied --type q4_K --embd 256 --ff 512 --head-dim 64|64"
  "gemma3_untied_window4|--preset tiny-gemma3 --untied --window 4 --swa-pattern 2 --seed 5|64"
  "phi3_longrope_long|--preset tiny-phi3|64"
  "phi3_longrope_short|--preset tiny-phi3 --ctx 1024 --longrope-orig 256|64"
  "phi3_q8_0_partial_rotary|--preset tiny-phi3 --type q8_0 --kv-heads 2 --rot 8 --seed 4|64"
  "phi3_f32_partial_rotary|--preset tiny-phi3 --kv-heads 2 --rot 8 --seed 4|64"
  "llama_yarn_f32|--preset tiny-llama --ctx 64 --yarn-factor 4 --yarn-orig 16|64"
  "qwen2_yarn_f32|--preset tiny-qwen2 --ctx 64 --yarn-factor 4 --yarn-orig 16 --untied|64"
  "gemma3_untied_f32|--preset tiny-gemma3 --untied --embd 256 --ff 512 --head-dim 64|64"
  "mixtral_f32|--preset tiny-mixtral|64"
  "mixtral_q8_0_skewed|--preset tiny-mixtral --type q8_0 --routing-skew 4 --seed 3|64"
  "qwen2moe_f32|--preset tiny-qwen2moe|64"
  "qwen3moe_f32|--preset tiny-qwen3moe|64"
  "qwen3moe_q4_k|--preset tiny-qwen3moe --type q4_K --embd 256 --ff-exp 256 --head-dim 64 --seed 3|64"
  "llama_mix_q4_k_m|--preset tiny-llama --untied --embd 256 --ff 512 --head-dim 64 --seed 6|64|Q4_K_M"
  "llama_mix_q5_k_m|--preset tiny-llama --untied --embd 256 --ff 512 --head-dim 64 --seed 7|64|Q5_K_M"
  "llama_mix_q6_k|--preset tiny-llama --untied --embd 256 --ff 512 --head-dim 64 --seed 8|64|Q6_K"
  "llama_mix_iq4_xs|--preset tiny-llama --untied --embd 256 --ff 512 --head-dim 64 --seed 9|64|IQ4_XS"
  "llama_mix_q3_k_m|--preset tiny-llama --untied --embd 256 --ff 512 --head-dim 64 --seed 10|64|Q3_K_M"
  "llama_mix_q2_k|--preset tiny-llama --untied --embd 256 --ff 512 --head-dim 64 --seed 11|64|Q2_K"
)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for c in "${cases[@]}"; do
  IFS='|' read -r name flags n_ctx mix <<<"$c"
  # ORACLE_ONLY=REGEX records only the cases whose name matches (the others' fixtures stay as they are).
  if [ -n "${ORACLE_ONLY:-}" ] && ! [[ "$name" =~ $ORACLE_ONLY ]]; then continue; fi  # e.g. ^llama_mix_
  model="$tmp/$name.gguf"
  if [ -n "$mix" ]; then
    # shellcheck disable=SC2086
    "$gen" $flags --type f32 -o "$tmp/$name.f32.gguf"
    "$llama/llama-quantize" "$tmp/$name.f32.gguf" "$model" "$mix" >"$tmp/$name.quantize.log" 2>&1 ||
      { echo "oracle_greedy: llama-quantize $mix failed:" >&2; tail -5 "$tmp/$name.quantize.log" >&2; exit 1; }
    cp "$model" "$out/$name.gguf.tmp" && mv "$out/$name.gguf.tmp" "$out/$name.gguf"
  else
    # shellcheck disable=SC2086
    "$gen" $flags -o "$model"
  fi
  json="$("$tool" "$model" "$n_ctx" "$n_predict" "$prompt")"
  python3 - "$json" "$out/$name.txt" "$flags" "$version" "$(sha256sum "$model" | cut -d' ' -f1)" "$mix" <<'PY'
import json, sys
j = json.loads(sys.argv[1])
with open(sys.argv[2], "w") as f:
    f.write("# llama.cpp's greedy tokens on a generated model; written by bench/oracle_greedy.sh\n")
    f.write(f"llama_cpp: {sys.argv[4]}\n")
    f.write(f"gen: {sys.argv[3]}\n")
    if sys.argv[6]:  # quantized by llama-quantize: the test reads the committed file
        f.write(f"llama_quantize: {sys.argv[6]} (of the gen flags' model in f32)\n")
        f.write(f"file: {sys.argv[2].rsplit('/', 1)[-1][:-4]}.gguf\n")
    f.write(f"gguf_sha256: {sys.argv[5]}\n")
    f.write(f"n_ctx: {j['n_ctx']}\n")
    f.write("prompt: " + " ".join(map(str, j["prompt"])) + "\n")
    f.write("tokens: " + " ".join(map(str, j["tokens"])) + "\n")
    f.write("last_prompt_logits: " + " ".join(repr(x) for x in j["last_prompt_logits"]) + "\n")
PY
  echo "$name: $(sed -n 's/^tokens: //p' "$out/$name.txt")"
done
