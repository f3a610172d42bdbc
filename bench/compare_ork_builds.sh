#!/usr/bin/env bash
# Prefill and decode speed of two ork builds on the same GGUF files (e.g. before and after a kernel
# change): per round, each file in turn, `BEFORE/ork bench` then `AFTER/ork bench` (interleaved, so
# the shared machine's load affects both alike); ROUNDS rounds of REPS repetitions each. Prints every
# run as one JSON line ({"build": "before"|"after", "file": …, "loadavg": the 1/5/15-minute load
# averages before the run, "run": ork bench --json}), then per file a summary line: medians over all
# repetitions, spreads (min, max, median absolute deviation), after ÷ before, the machine and kernel
# ISA as ork bench names them. Not run by CI (minutes on 2 cores).
# DEPTH (environment, default 0): every test after that many context tokens (ork bench -d).
# usage: bench/compare_ork_builds.sh BEFORE_ORK AFTER_ORK THREADS ROUNDS REPS PROMPT GEN MODEL...
set -euo pipefail
if [ $# -lt 8 ]; then
  echo "usage: $0 BEFORE_ORK AFTER_ORK THREADS ROUNDS REPS PROMPT GEN MODEL..." >&2
  exit 2
fi
before="$1" after="$2" threads="$3" rounds="$4" reps="$5" prompt="$6" gen="$7"
shift 7
for bin in "$before" "$after"; do
  [ -x "$bin" ] || { echo "compare_ork_builds: '$bin' is not an executable" >&2; exit 2; }
done
for model in "$@"; do
  [ -f "$model" ] || { echo "compare_ork_builds: model '$model' does not exist" >&2; exit 2; }
done
runs="$(mktemp)"
trap 'rm -f "$runs"' EXIT
for ((round = 0; round < rounds; ++round)); do
  for model in "$@"; do
    for build in before after; do
      bin="$before"
      [ "$build" = after ] && bin="$after"
      load="$(cut -d' ' -f1-3 /proc/loadavg)"
      out="$("$bin" bench -m "$model" -t "$threads" -r "$reps" -p "$prompt" -n "$gen" -d "${DEPTH:-0}" --json)"
      line="{\"build\":\"$build\",\"file\":\"$model\",\"round\":$round,\"loadavg\":\"$load\",\"run\":$out}"
      echo "$line" | tee -a "$runs"
    done
  done
done
python3 - "$runs" "$prompt" "$gen" <<'PY'
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
p, n = sys.argv[2], sys.argv[3]

def spread(v):  # None for a test that did not run (PROMPT or GEN 0)
    if not v:
        return None
    m = statistics.median(v)
    return {"median": m, "min": min(v), "max": max(v), "mad": statistics.median(abs(x - m) for x in v), "n": len(v)}

for f in dict.fromkeys(l["file"] for l in lines):
    s = {"summary": True, "file": f}
    for b in ("before", "after"):
        rs = [l["run"] for l in lines if l["file"] == f and l["build"] == b]
        s[f"{b}_kernels"] = rs[0]["kernels"]
        s["machine"], s["threads"] = rs[0]["machine"], rs[0]["threads"]
        s[f"{b}_pp{p}"] = spread([v for r in rs for v in r["pp_tok_per_s_runs"]])
        s[f"{b}_tg{n}"] = spread([v for r in rs for v in r["tg_tok_per_s_runs"]])
    for t in (f"pp{p}", f"tg{n}"):
        if s[f"after_{t}"] and s[f"before_{t}"]:
            s[f"after_over_before_{t}"] = s[f"after_{t}"]["median"] / s[f"before_{t}"]["median"]
    load1 = [float(l["loadavg"].split()[0]) for l in lines if l["file"] == f]
    s["loadavg_1min_range"] = [min(load1), max(load1)]
    print(json.dumps(s))
PY
