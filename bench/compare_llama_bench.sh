#!/usr/bin/env bash
# ork bench against llama.cpp's own llama-bench (built by bench/build_llama_cpp.sh) on the same GGUF
# files and thread count: per file, ROUNDS rounds interleaved (ork, llama-bench, ork, …), REPS
# repetitions of pp128 and tg64 each. Prints every run as one JSON line ({"program": …}), then per
# file a summary line with the medians over all repetitions, their spreads (min, max, and the
# median absolute deviation) and the ratios ork ÷ llama.cpp, naming llama.cpp's build number and
# commit as llama-bench reports them. A file ork refuses gets "ork_error" instead of ork figures.
# Each llama-bench line carries `ork probe cpu` measured just before and after it (probe_before,
# probe_after), so its decode is paired with the read rate and the machine state as ork's is.
# The summary is bench/summarize_llama_bench.py, which also sums up several saved runs as one.
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
    # The machine's state around llama-bench's run, as ork bench measures it around each of its
    # repetitions (ork probe cpu: the read rate, the threads' worth of arithmetic).
    before="$("$root/build/ork" probe cpu -t "$threads" --json)"
    o="$("$bench" -m "$model" -t "$threads" -r "$reps" -p 128 -n 64 -o json 2>/dev/null)"
    after="$("$root/build/ork" probe cpu -t "$threads" --json)"
    printf '{"program": "llama-bench", "file": "%s", "probe_before": %s, "probe_after": %s, "run": %s}\n' \
      "$model" "$before" "$after" "$(printf '%s' "$o" | tr -d '\n')" | tee -a "$out"
  done
done
python3 "$root/bench/summarize_llama_bench.py" "$out"
