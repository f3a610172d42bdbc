#!/usr/bin/env bash
# Prefill and decode speed at a context depth, ork bench beside llama.cpp's own llama-bench (built by
# bench/build_llama_cpp.sh) on the same GGUF file and thread count: both with -d DEPTH (DEPTH tokens
# filled once, untimed, then every repetition times pp PROMPT tokens, or tg GEN decode steps, after
# them), KV cache f16 on both. Per round, each depth in turn, ork then llama-bench (interleaved);
# ROUNDS rounds of REPS repetitions. Prints every run as one JSON line ({"program": …}), then per
# depth a summary line: medians over all repetitions, spreads (min, max, median absolute deviation),
# ratios ork ÷ llama.cpp, llama.cpp's build number, commit and flash-attention setting as llama-bench
# reports them, and the machine as ork bench names it. Not run by CI (minutes on 2 cores).
# usage: bench/compare_llama_depth.sh LLAMA_CPP_DIR THREADS ROUNDS REPS PROMPT GEN MODEL DEPTH...
#        (BUILD_DIR default build/)
#    or: bench/compare_llama_depth.sh --summarize RUNS.jsonl PROMPT GEN MODEL
#        (the summary lines of run lines this script printed, e.g. of a run stopped early)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
summarize() {
python3 - "$1" "$2" "$3" "$4" "$root/bench" <<'PY'
import json, statistics, sys
sys.path.insert(0, sys.argv[5])
from summarize_llama_bench import spread
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip() and '"program"' in l]
model, p, n = sys.argv[2], sys.argv[3], sys.argv[4]

for d in dict.fromkeys(l["depth"] for l in lines):
    ls = [l for l in lines if l["depth"] == d]
    ork = [l["run"] for l in ls if l["program"] == "ork bench"]
    lb = [t for l in ls if l["program"] == "llama-bench" for t in l["run"]]
    lpp = [s for t in lb if t["n_gen"] == 0 for s in t["samples_ts"]]
    ltg = [s for t in lb if t["n_prompt"] == 0 for s in t["samples_ts"]]
    s = {"summary": True, "file": model, "depth": d, "threads": ork[0]["threads"], "machine": ork[0]["machine"],
         "ork_kernels": ork[0]["kernels"], "kv_type": "f16",
         "llama_cpp": {"build_number": lb[0]["build_number"], "build_commit": lb[0]["build_commit"],
                       "cpu_info": lb[0]["cpu_info"], "backends": lb[0]["backends"],
                       "flash_attn": lb[0].get("flash_attn"), "n_threads": lb[0]["n_threads"]},
         f"ork_pp{p}": spread([v for r in ork for v in r["pp_tok_per_s_runs"]]),
         f"llama_cpp_pp{p}": spread(lpp),
         f"ork_tg{n}": spread([v for r in ork for v in r["tg_tok_per_s_runs"]]),
         f"llama_cpp_tg{n}": spread(ltg)}
    if s[f"ork_pp{p}"] and s[f"llama_cpp_pp{p}"]:
        s["pp_ratio"] = s[f"ork_pp{p}"]["median"] / s[f"llama_cpp_pp{p}"]["median"]
    if s[f"ork_tg{n}"] and s[f"llama_cpp_tg{n}"]:
        s["tg_ratio"] = s[f"ork_tg{n}"]["median"] / s[f"llama_cpp_tg{n}"]["median"]
    print(json.dumps(s))
PY
}
if [ "${1:-}" = --summarize ]; then
  [ $# -eq 5 ] || { echo "usage: bench/compare_llama_depth.sh --summarize RUNS.jsonl PROMPT GEN MODEL" >&2; exit 2; }
  [ -f "$2" ] || { echo "compare_llama_depth: $2: no such file" >&2; exit 1; }
  summarize "$2" "$5" "$3" "$4"
  exit 0
fi
[ $# -ge 8 ] || { echo "usage: bench/compare_llama_depth.sh LLAMA_CPP_DIR THREADS ROUNDS REPS PROMPT GEN MODEL DEPTH..." >&2; exit 2; }
lcpp="$1" threads="$2" rounds="$3" reps="$4" n_prompt="$5" n_gen="$6" model="$7"
shift 7
bench="$lcpp/llama-bench"
[ -x "$bench" ] || { echo "compare_llama_depth: $bench: not built (bench/build_llama_cpp.sh $lcpp)" >&2; exit 1; }
[ -x "$build/ork" ] || { echo "compare_llama_depth: $build/ork: not built" >&2; exit 1; }
[ -f "$model" ] || { echo "compare_llama_depth: $model: no such file" >&2; exit 1; }
for d in "$@"; do
  [[ "$d" =~ ^[0-9]+$ ]] || { echo "compare_llama_depth: depth '$d' is not a token count" >&2; exit 2; }
done
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for d in "$@"; do
    o="$("$build/ork" bench -m "$model" -t "$threads" -r "$reps" -p "$n_prompt" -n "$n_gen" -d "$d" --kv-type f16 --json)"
    printf '{"program": "ork bench", "depth": %s, "run": %s}\n' "$d" "$o" | tee -a "$out"
    o="$("$bench" -m "$model" -t "$threads" -r "$reps" -p "$n_prompt" -n "$n_gen" -d "$d" -ctk f16 -ctv f16 -o json 2>/dev/null)"
    printf '{"program": "llama-bench", "depth": %s, "run": %s}\n' "$d" "$(printf '%s' "$o" | tr -d '\n')" | tee -a "$out"
  done
done
summarize "$out" "$model" "$n_prompt" "$n_gen"
