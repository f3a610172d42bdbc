#!/usr/bin/env bash
# ork against llama.cpp's CPU build on the same GGUF file and thread count, runs interleaved
# (ork, llama.cpp, ork, llama.cpp, …) so that both see the same machine state. Prints one JSON
# object per run (ork bench --json; bench/llama_cpp/bench.mjs), then a summary object with the
# medians over all runs. llama.cpp comes prebuilt in the npm package node-llama-cpp@3.21.1, installed
# on first use into build/llama-cpp-bench (needs node and npm: `sudo apt-get install nodejs npm`).
# usage: bench/compare_llama_cpp.sh MODEL [THREADS=2] [ROUNDS=3] [REPS=5]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
model="${1:?usage: bench/compare_llama_cpp.sh MODEL [THREADS] [ROUNDS] [REPS]}"
threads="${2:-2}" rounds="${3:-3}" reps="${4:-5}"
[ -f "$model" ] || { echo "compare_llama_cpp: $model: no such file" >&2; exit 1; }
command -v node >/dev/null && command -v npm >/dev/null ||
  { echo "compare_llama_cpp: needs node and npm (sudo apt-get install nodejs npm)" >&2; exit 1; }
[ -x "$root/build/ork" ] || "$root/scripts/build.sh" >&2
dir="$root/build/llama-cpp-bench"
if [ ! -d "$dir/node_modules/node-llama-cpp" ]; then
  mkdir -p "$dir"
  cp "$root/bench/llama_cpp/package.json" "$dir/"
  (cd "$dir" && npm install --no-audit --no-fund >&2)
fi
cp "$root/bench/llama_cpp/bench.mjs" "$dir/"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
for ((r = 0; r < rounds; ++r)); do
  "$root/build/ork" bench -m "$model" -t "$threads" -r "$reps" --json | tee -a "$out"
  node "$dir/bench.mjs" "$model" "$threads" "$reps" | tee -a "$out"
done
python3 - "$out" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ork = [r for r in runs if "runtime" not in r]
lcpp = [r for r in runs if "runtime" in r]
med = lambda rs, k: statistics.median(v for r in rs for v in r[k])
s = {"summary": True, "machine": ork[0]["machine"], "model": ork[0]["model"], "threads": ork[0]["threads"],
     "ork_pp_tok_per_s_median": med(ork, "pp_tok_per_s_runs"),
     "llama_cpp_pp_tok_per_s_median": med(lcpp, "pp_tok_per_s_runs"),
     "ork_tg_tok_per_s_median": med(ork, "tg_tok_per_s_runs"),
     "llama_cpp_tg_tok_per_s_median": med(lcpp, "tg_tok_per_s_runs"),
     "ork_decode_read_fraction_median": statistics.median(r["decode_read_fraction"] for r in ork),
     "ork_decode_read_fraction_paired_median": med(ork, "decode_read_fraction_paired_runs"),
     "ork_decode_copy_fraction_median": statistics.median(r["decode_bandwidth_fraction"] for r in ork)}
s["pp_ratio"] = s["ork_pp_tok_per_s_median"] / s["llama_cpp_pp_tok_per_s_median"]
s["tg_ratio"] = s["ork_tg_tok_per_s_median"] / s["llama_cpp_tg_tok_per_s_median"]
print(json.dumps(s))
PY
