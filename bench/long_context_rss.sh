#!/usr/bin/env bash
# A 16K-token context on a generated model (llama, q8_0, 4 layers, kv_dim 64): the memory plan
# (`ork mem --plan-only`: ram_bytes = mapped file + KV cache + f32 staging + host scratch) beside the
# measured peak RSS of `ork run` filling the context (GNU time), and the same run on a 2-token
# prompt (the process's own baseline, the KV cache untouched: calloc'ed pages). Prints one JSON
# object. Not run by CI (minutes of prefill on 2 cores).
#
# usage: bench/long_context_rss.sh [KV_TYPE] [N_CTX]   (default f16 16384; BUILD_DIR default build/)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
kv="${1:-f16}"
n_ctx="${2:-16384}"
[ -x /usr/bin/time ] || { echo "long_context_rss: needs GNU time (/usr/bin/time)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
model="$tmp/m.gguf"
"$build/ork-gen-model" --arch llama --type q8_0 --vocab 512 --embd 128 --layers 4 --heads 4 --kv-heads 2 \
  --ff 256 --ctx "$n_ctx" -o "$model" >/dev/null
n_prompt=$((n_ctx - 8))
prompt="$(python3 -c "import random; random.seed(1); print(','.join(str(random.randrange(1, 512)) for _ in range($n_prompt)))")"
plan="$("$build/ork" mem -m "$model" --device cpu --ctx "$n_ctx" --kv-type "$kv" --plan-only --json)"
rss_kib() { grep 'Maximum resident' "$1" | awk '{print $NF}'; }
/usr/bin/time -v "$build/ork" run -m "$model" --device cpu -t 2 --ctx "$n_ctx" --kv-type "$kv" --prompt-tokens 5,6 \
  -n 2 --temp 0 --print-tokens >/dev/null 2>"$tmp/short"
/usr/bin/time -v "$build/ork" run -m "$model" --device cpu -t 2 --ctx "$n_ctx" --kv-type "$kv" --prompt-tokens "$prompt" \
  -n 8 --temp 0 --json >"$tmp/run.json" 2>"$tmp/long"
python3 - "$plan" "$(rss_kib "$tmp/short")" "$(rss_kib "$tmp/long")" "$tmp/run.json" "$kv" <<'PY'
import json, sys
plan = json.loads(sys.argv[1])["plan"]
short, long_ = int(sys.argv[2]) * 1024, int(sys.argv[3]) * 1024
run = json.load(open(sys.argv[4]))
machine = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown")
print(json.dumps({
    "machine": machine, "kv_type": sys.argv[5], "n_ctx": plan["n_ctx"], "n_prompt": run["n_prompt"],
    "plan_ram_bytes": plan["ram_bytes"], "plan_kv_cache_bytes": plan["kv_cache_bytes"],
    "plan_kv_staging_bytes": plan["kv_staging_bytes"], "plan_host_scratch_bytes": plan["host_scratch_bytes"],
    "rss_baseline_bytes": short, "rss_peak_bytes": long_,
    "rss_growth_bytes": long_ - short, "rss_over_plan": round((long_ - short) / plan["ram_bytes"], 3),
    "prompt_tok_per_s": run["prompt_tok_per_s"], "gen_tok_per_s": run["gen_tok_per_s"]}))
PY
