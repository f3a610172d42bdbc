#!/usr/bin/env bash
# Paired A/B of two kernels_bench builds (e.g. before and after a kernel change): N pairs, each pair
# BEFORE then AFTER on the benchmarks FILTER selects (--benchmark_min_time 0.3 s each), so the
# shared machine's load affects both alike. Prints every pair as one JSON line ({"pair": i,
# "loadavg": …, "before": {benchmark: GB/s}, "after": …}), then per benchmark a summary line: the
# medians of each build's GB/s, and the median, min and max of the per-pair ratios after ÷ before
# (the statistic that survives this VM's phases, which move both builds of a pair alike). Not run by
# CI (a minute or more on 2 cores).
# usage: bench/compare_kernels_builds.sh BEFORE_KERNELS_BENCH AFTER_KERNELS_BENCH N FILTER
#   e.g. bench/compare_kernels_builds.sh /tmp/kb_before build/bench/kernels_bench 8 'BM_QPanelsModelDecode/type:(12|14)/'
set -euo pipefail
if [[ $# -ne 4 ]]; then
  echo "usage: $0 BEFORE_KERNELS_BENCH AFTER_KERNELS_BENCH N FILTER" >&2
  exit 2
fi
for b in "$1" "$2"; do
  [[ -x "$b" ]] || { echo "$0: $b is not an executable kernels_bench" >&2; exit 2; }
done
[[ "$3" =~ ^[1-9][0-9]*$ ]] || { echo "$0: N must be a positive integer, not '$3'" >&2; exit 2; }
exec python3 - "$@" <<'PY'
import json, os, statistics, subprocess, sys

before, after, n, flt = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def run(binary):
    p = subprocess.run([binary, f"--benchmark_filter={flt}", "--benchmark_min_time=0.3",
                        "--benchmark_format=json"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare_kernels_builds: {binary} exited {p.returncode}: {p.stderr.strip()[:200]}")
    out = {}
    for b in json.loads(p.stdout)["benchmarks"]:
        if "error_occurred" in b:
            continue
        out[b["name"]] = b["GB/s"] / 1e9
    if not out:
        sys.exit(f"compare_kernels_builds: no benchmark matched '{flt}' in {binary}")
    return out

rows = []
for i in range(n):
    load = os.getloadavg()
    a, b = run(before), run(after)
    rows.append((a, b))
    print(json.dumps({"pair": i, "loadavg": [round(x, 2) for x in load], "before": a, "after": b}), flush=True)
for name in rows[0][0]:
    ra = [a[name] for a, b in rows if name in b]
    rb = [b[name] for a, b in rows if name in b]
    ratio = [y / x for x, y in zip(ra, rb)]
    print(json.dumps({"summary": True, "benchmark": name, "pairs": len(ratio),
                      "before_gb_per_s_median": statistics.median(ra), "after_gb_per_s_median": statistics.median(rb),
                      "ratio_median": statistics.median(ratio), "ratio_min": min(ratio), "ratio_max": max(ratio)}))
PY
