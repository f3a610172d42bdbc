#!/usr/bin/env bash
# ork's speculative decoding beside llama.cpp's llama-speculative-simple on the same target and draft
# GGUF files (CPU, greedy, THREADS threads), REPS runs each, interleaved: ork target-only, ork with
# the draft (--draft-max K), llama-bench tg N (llama.cpp's target-only decode), llama-speculative-
# simple (--spec-type draft-simple --spec-draft-n-max K). Prints every run as a JSON line, then one
# summary line: medians (min, max) of the decode tok/s, each side's speed-up over its own target-only
# decode, and the acceptance rates. MEASURED wall clock on this machine, nothing modeled. ork's
# figure is gen_tok_per_s (tokens / decode time); llama-speculative-simple's its "decoded N tokens
# in T seconds" line; llama-bench's the tg test's avg_ts. Not for CI (needs bench/build_llama_cpp.sh
# and `cmake --build ... --target llama-speculative-simple` in that build).
# usage: bench/compare_llama_speculative.sh LLAMA_CPP_BIN_DIR THREADS REPS N K TARGET DRAFT
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -eq 7 ] || { echo "usage: bench/compare_llama_speculative.sh LLAMA_CPP_BIN_DIR THREADS REPS N K TARGET DRAFT" >&2; exit 2; }
lcpp="$1" threads="$2" reps="$3" n="$4" k="$5" target="$6" draft="$7"
spec="$lcpp/llama-speculative-simple" lbench="$lcpp/llama-bench" ork="$root/build/ork"
for exe in "$spec" "$lbench" "$ork"; do
  [ -x "$exe" ] || { echo "compare_llama_speculative: $exe: not built" >&2; exit 1; }
done
for f in "$target" "$draft"; do [ -f "$f" ] || { echo "compare_llama_speculative: $f: no such file" >&2; exit 1; }; done
prompt="the quick brown fox"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
for ((r = 0; r < reps; ++r)); do
  o="$("$ork" run -m "$target" -p "$prompt" -n "$n" --temp 0 -t "$threads" --device cpu --json)"
  printf '{"program": "ork", "mode": "target", "run": %s}\n' "$o" | tee -a "$out"
  o="$("$ork" run -m "$target" --draft "$draft" --draft-max "$k" -p "$prompt" -n "$n" --temp 0 -t "$threads" --device cpu --json)"
  printf '{"program": "ork", "mode": "draft", "run": %s}\n' "$o" | tee -a "$out"
  o="$("$lbench" -m "$target" -t "$threads" -r 1 -p 0 -n "$n" -o json 2>/dev/null | tr -d '\n')"
  printf '{"program": "llama-bench", "mode": "target", "run": %s}\n' "$o" | tee -a "$out"
  o="$("$spec" -m "$target" -md "$draft" --spec-type draft-simple --spec-draft-n-max "$k" --spec-draft-n-min 0 \
        -p "$prompt" -n "$n" --temp 0 -t "$threads" -c 512 2>&1 | tr -d '\0' | grep -a -E 'decoded|n_drafted|n_accept|error|failed' | tr '\n' ' ' || true)"
  printf '{"program": "llama-speculative-simple", "mode": "draft", "log": %s}\n' \
    "$(printf '%s' "$o" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')" | tee -a "$out"
done
python3 - "$out" "$k" "$n" <<'PY'
import json, re, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def s(v):
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)} if v else None
ork_t = [l["run"]["gen_tok_per_s"] for l in lines if l["program"] == "ork" and l["mode"] == "target"]
ork_d = [l["run"]["gen_tok_per_s"] for l in lines if l["program"] == "ork" and l["mode"] == "draft"]
ork_acc = [l["run"]["draft"]["acceptance_rate"] for l in lines if l["program"] == "ork" and l["mode"] == "draft"]
lb = [next(t["avg_ts"] for t in l["run"] if t["n_gen"] > 0) for l in lines if l["program"] == "llama-bench"]
ls, lacc = [], []
for l in lines:
    if l["program"] != "llama-speculative-simple":
        continue
    m = re.search(r"decoded\s+(\d+) tokens in\s+([\d.]+) seconds", l["log"])
    if m:
        ls.append(int(m.group(1)) / float(m.group(2)))
    d, a = re.search(r"n_drafted\s*=\s*(\d+)", l["log"]), re.search(r"n_accept\s*=\s*(\d+)", l["log"])
    if d and a and int(d.group(1)) > 0:
        lacc.append(int(a.group(1)) / int(d.group(1)))
summary = {"summary": True, "measured": True, "K": int(sys.argv[2]), "n_gen": int(sys.argv[3]),
           "ork_target_tok_per_s": s(ork_t), "ork_draft_tok_per_s": s(ork_d),
           "ork_speedup": statistics.median(ork_d) / statistics.median(ork_t) if ork_t and ork_d else None,
           "ork_acceptance": s(ork_acc),
           "llama_bench_tg_tok_per_s": s(lb), "llama_speculative_simple_tok_per_s": s(ls),
           "llama_speedup": statistics.median(ls) / statistics.median(lb) if lb and ls else None,
           "llama_acceptance": s(lacc)}
print(json.dumps(summary))
PY
