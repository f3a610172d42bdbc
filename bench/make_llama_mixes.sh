#!/usr/bin/env bash
# Makes the GGUF files issue 20 compares on: one generated F32 model (ork-gen-model, deterministic)
# quantized by llama.cpp's own llama-quantize (built by bench/build_llama_cpp.sh) into the
# llama-quantize mixes people download — Q4_K_M, Q5_K_M, Q6_K, Q8_0, Q4_0, IQ4_XS by default — so
# ork and llama.cpp run the very files llama.cpp's tooling writes. Never run from CI.
# Default shape: the 150 M-parameter llama of docs/ops.md (vocabulary 32000, n_embd 1024, 6 layers,
# 16 heads, FF 2816); SHAPE overrides the ork-gen-model flags. Files already in OUT_DIR are kept
# (every file is written under a temporary name and renamed, so a kept file is whole), so one
# OUT_DIR holds one shape: a different SHAPE needs a new OUT_DIR.
# Prints one line per file: its path and how many tensors llama-quantize quantized to each type
# (from its log, kept beside the file as TYPE.quantize.log; tensors it kept in f32 are not counted).
# usage: bench/make_llama_mixes.sh LLAMA_CPP_DIR OUT_DIR [TYPE...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -ge 2 ] || { echo "usage: bench/make_llama_mixes.sh LLAMA_CPP_DIR OUT_DIR [TYPE...]" >&2; exit 2; }
lcpp="$1" out="$2"
shift 2
types=("$@")
[ ${#types[@]} -gt 0 ] || types=(Q4_K_M Q5_K_M Q6_K Q8_0 Q4_0 IQ4_XS)
quantize="$lcpp/llama-quantize"
[ -x "$quantize" ] || { echo "make_llama_mixes: $quantize: not built (bench/build_llama_cpp.sh $lcpp)" >&2; exit 1; }
gen="$root/build/ork-gen-model"
[ -x "$gen" ] || { echo "make_llama_mixes: $gen: not built (scripts/build.sh)" >&2; exit 1; }
read -r -a shape <<<"${SHAPE:---arch llama --vocab 32000 --embd 1024 --layers 6 --heads 16 --kv-heads 16 --ff 2816}"
mkdir -p "$out"
f32="$out/F32.gguf"
if [ ! -f "$f32" ]; then
  "$gen" "${shape[@]}" --type f32 -o "$f32.tmp" >&2
  mv "$f32.tmp" "$f32"
fi
for t in "${types[@]}"; do
  dst="$out/$t.gguf"
  if [ ! -f "$dst" ]; then
    "$quantize" "$f32" "$dst.tmp" "$t" >"$out/$t.quantize.log" 2>&1 ||
      { echo "make_llama_mixes: llama-quantize $t failed (see $out/$t.quantize.log)" >&2; exit 1; }
    mv "$dst.tmp" "$dst"
  fi
  # The tensor types llama-quantize chose (its log names each tensor and the type it wrote).
  counts="$(grep -oE 'converting to [A-Za-z0-9_]+' "$out/$t.quantize.log" | awk '{print $3}' | sort | uniq -c |
    awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2}')"
  echo "$dst: ${counts:-types not in the log}"
done
