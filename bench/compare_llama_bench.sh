#!/usr/bin/env bash
# ork bench against llama.cpp's own llama-bench (built by bench/build_llama_cpp.sh) on the same GGUF
# files and thread count: per file, ROUNDS rounds interleaved (ork, llama-bench, ork, …), REPS
# repetitions of pp128 and tg64 each. Prints every run as one JSON line ({"program": …}), then per
# file a summary line with the medians over all repetitions, their spreads (min, max, and the
# median absolute deviation) and the ratios ork ÷ llama.cpp, naming llama.cpp's build number and
# commit as llama-bench reports them. A file ork refuses gets "ork_error" instead of ork figures.
# usage: bench/compare_llama_bench.sh LLAMA_CPP_DIR THREADS ROUNDS REPS MODEL...
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -ge 5 ] || { echo "usage: bench/compare_llama_bench.sh LLAMA_CPP_DIR THREADS ROUNDS REPS MODEL..." >&2; exit 2; }
lcpp="$1" threads="$2" rounds="$3" reps="$4"
shift 4
bench="$lcpp/llama-bench"
[ -x "$bench" ] || { echo "compare_llama_bench: $bench: not built (bench/build_llama_cpp.sh $lcpp)" >&2; exit 1; }
[ -x "$root/build/ork" ] || { echo "compare_llama_bench: build/ork: not built" >&2; exit 1; }
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
for model in "$@"; do
  [ -f "$model" ] || { echo "compare_llama_bench: $model: no such file" >&2; exit 1; }
  for ((r = 0; r < rounds; ++r)); do
    if o="$("$root/build/ork" bench -m "$model" -t "$threads" -r "$reps" -p 128 -n 64 --json 2>&1)"; then
      printf '{"program": "ork bench", "file": "%s", "run": %s}\n' "$model" "$o" | tee -a "$out"
    else
      printf '{"program": "ork bench", "file": "%s", "error": %s}\n' "$model" \
        "$(printf '%s' "$o" | tail -n 1 | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')" | tee -a "$out"
    fi
    o="$("$bench" -m "$model" -t "$threads" -r "$reps" -p 128 -n 64 -o json 2>/dev/null)"
    printf '{"program": "llama-bench", "file": "%s", "run": %s}\n' "$model" "$(printf '%s' "$o" | tr -d '\n')" | tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]

def spread(v):
    if not v:
        return None
    m = statistics.median(v)
    return {"median": m, "min": min(v), "max": max(v), "mad": statistics.median(abs(x - m) for x in v), "n": len(v)}

for f in dict.fromkeys(l["file"] for l in lines):
    ls = [l for l in lines if l["file"] == f]
    ork = [l["run"] for l in ls if l["program"] == "ork bench" and "run" in l]
    err = [l["error"] for l in ls if l["program"] == "ork bench" and "error" in l]
    lb = [t for l in ls if l["program"] == "llama-bench" for t in l["run"]]
    lpp = [s for t in lb if t["n_gen"] == 0 for s in t["samples_ts"]]
    ltg = [s for t in lb if t["n_prompt"] == 0 for s in t["samples_ts"]]
    s = {"summary": True, "file": f, "threads": lb[0]["n_threads"] if lb else None,
         "llama_cpp": {"build_number": lb[0]["build_number"], "build_commit": lb[0]["build_commit"],
                       "cpu_info": lb[0]["cpu_info"], "backends": lb[0]["backends"]} if lb else None,
         "llama_cpp_pp128": spread(lpp), "llama_cpp_tg64": spread(ltg)}
    if ork:
        s["machine"] = ork[0]["machine"]
        s["ork_kernels"] = ork[0]["kernels"]
        s["ork_pp128"] = spread([v for r in ork for v in r["pp_tok_per_s_runs"]])
        s["ork_tg64"] = spread([v for r in ork for v in r["tg_tok_per_s_runs"]])
        s["ork_decode_gb_per_s_median"] = statistics.median(r["decode_gb_per_s"] for r in ork)
        s["ork_decode_read_fraction_median"] = statistics.median(r["decode_read_fraction"] for r in ork)
        # Every repetition's decode over the read rate measured around it (ork bench's paired runs).
        s["ork_decode_read_fraction_paired"] = spread([v for r in ork for v in r["decode_read_fraction_paired_runs"]])
        if lpp and ltg:
            s["pp_ratio"] = s["ork_pp128"]["median"] / s["llama_cpp_pp128"]["median"]
            s["tg_ratio"] = s["ork_tg64"]["median"] / s["llama_cpp_tg64"]["median"]
    else:
        s["ork_error"] = err[0] if err else "no run"
    print(json.dumps(s))
PY
