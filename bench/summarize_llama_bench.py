#!/usr/bin/env python3
# Per GGUF file, the summary bench/compare_llama_bench.sh prints after its runs, from the run lines
# of one or more of its outputs (JSONL: {"program": "ork bench" | "llama-bench", "file": …, "run": …};
# summary lines are skipped): medians over all repetitions with min, max and median absolute
# deviation, the ratios ork ÷ llama.cpp of the medians, ork's paired decode ÷ read rate fractions
# (also split by the arithmetic ork bench's compute probe found before and after each repetition:
# the machine's state, rep_states), and where the llama-bench lines carry `ork probe cpu` before and
# after them, llama.cpp's decode ÷ read rate the same way and both programs' decode split by state.
# Several outputs together summarize several runs of the same files as one.
# usage: bench/summarize_llama_bench.py RUNS.jsonl...
import json, statistics, sys

# A repetition after which ork bench's compute probe found at least this fraction of the thread
# count's worth of arithmetic ran on cores of its own; below, the threads shared execution (on the
# development VM the figure is bimodal: 1.6–1.7 or 1.0 for 2 threads, docs/ops.md "eighth session").
OWN_CORES = 0.65


def state(cores_before, cores_after, threads):
    """The machine's state around one timed run from the compute probe's threads' worth before and
    after it: "own_cores" where both reach OWN_CORES of the thread count, "shared" where both fall
    below, None where they disagree (a phase's edge). The one rule for ork's and llama.cpp's runs."""
    own = [c >= OWN_CORES * threads for c in (cores_before, cores_after)]
    return ("own_cores" if own[0] else "shared") if own[0] == own[1] else None


def rep_states(r):
    """state() of each decode repetition of an ork bench run: before it, the figure after the one
    before (or before the first). A run from before ork bench measured before its first repetition
    judges that one by the figure after it alone."""
    after = r.get("compute_cores_paired_runs", [])
    before = [r.get("compute_cores_before_first_run", after[0] if after else 0)] + after[:-1]
    return [state(b, a, r["threads"]) for b, a in zip(before, after)]


def spread(v):
    """Median, min, max, median absolute deviation and count of v (None when empty); also used by
    bench/compare_llama_depth.sh."""
    if not v:
        return None
    m = statistics.median(v)
    return {"median": m, "min": min(v), "max": max(v), "mad": statistics.median(abs(x - m) for x in v), "n": len(v)}


def main():
    if len(sys.argv) < 2:
      sys.exit("usage: bench/summarize_llama_bench.py RUNS.jsonl...")
    # Run lines of every file named (summary lines, as this prints them, are skipped).
    lines = [d for path in sys.argv[1:] for d in (json.loads(l) for l in open(path) if l.strip())
             if not d.get("summary")]
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
            s["ork_decode_read_fraction_paired"] = spread([v for r in ork for v in r.get("decode_read_fraction_paired_runs", [])])
            # The same, and the decode's tok/s, split by the arithmetic the threads got around each
            # repetition (ork bench's compute probe, rep_states; runs from before it have none):
            # "own_cores" where it found at least OWN_CORES of the thread count's worth before and
            # after, "shared" where below both times (e.g. two vCPUs on one core).
            by = {"own_cores": [], "shared": []}
            tg_by = {"own_cores": [], "shared": []}
            for r in ork:
                for frac, tps, rep_state in zip(r.get("decode_read_fraction_paired_runs", []), r["tg_tok_per_s_runs"], rep_states(r)):
                    if rep_state:
                        by[rep_state].append(frac)
                        tg_by[rep_state].append(tps)
            if any(r.get("compute_cores_paired_runs") for r in ork):
                s["ork_decode_read_fraction_paired_by_compute"] = {k: spread(v) for k, v in by.items()}
                s["ork_tg64_by_compute"] = {k: spread(v) for k, v in tg_by.items()}
            # llama.cpp's decode over the read rate `ork probe cpu` measured around its run (the higher
            # of the two, as ork bench pairs), in ork's bytes a token; split by the state both probes
            # agree on (a run whose probes disagree is counted in neither split).
            wbytes = ork[0]["weight_bytes_per_token"]
            lfrac, lby, lfrac_by = [], {"own_cores": [], "shared": []}, {"own_cores": [], "shared": []}
            for l in ls:
                if l["program"] != "llama-bench" or "probe_before" not in l:
                    continue
                pb, pa = l["probe_before"], l["probe_after"]
                read = max(pb["read_gb_per_s"], pa["read_gb_per_s"])
                run_state = state(pb["compute_cores"], pa["compute_cores"], pb["threads"])
                for t in l["run"]:
                    if t["n_prompt"] != 0:
                        continue
                    for tps in t["samples_ts"]:
                        frac = tps * wbytes / 1e9 / read
                        lfrac.append(frac)
                        if run_state:
                            lby[run_state].append(tps)
                            lfrac_by[run_state].append(frac)
            if lfrac:
                s["llama_cpp_decode_read_fraction_paired"] = spread(lfrac)
                s["llama_cpp_decode_read_fraction_paired_by_compute"] = {k: spread(v) for k, v in lfrac_by.items()}
                s["llama_cpp_tg64_by_compute"] = {k: spread(v) for k, v in lby.items()}
                if "ork_tg64_by_compute" in s:
                    s["tg_ratio_by_compute"] = {
                        k: (s["ork_tg64_by_compute"][k]["median"] / lby_m["median"]
                            if s["ork_tg64_by_compute"][k] and lby_m else None)
                        for k, lby_m in s["llama_cpp_tg64_by_compute"].items()}
            if lpp and ltg:
                s["pp_ratio"] = s["ork_pp128"]["median"] / s["llama_cpp_pp128"]["median"]
                s["tg_ratio"] = s["ork_tg64"]["median"] / s["llama_cpp_tg64"]["median"]
        else:
            s["ork_error"] = err[0] if err else "no run"
        print(json.dumps(s))


if __name__ == "__main__":
    main()
