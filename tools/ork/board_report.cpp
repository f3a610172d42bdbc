#include "board_report.h"

#include <cstdio>

#include "core/json.h"
#include "runtime/hybrid_matmul.h"

namespace ork::cli {

namespace {

struct Phase {
  double ns = 0, npu_ns = 0, cpu_ns = 0, stall_ns = 0, host_ns = 0, submits = 0, tasks = 0, ddr = 0, switches = 0;
  double busy[3] = {0, 0, 0};
};

Phase between(const BoardSnapshot& sa, const BoardSnapshot& sb) {
  const npu::sim::SimStats &a = sa.npu, &b = sb.npu;
  Phase p;
  p.npu_ns = b.modeled_ns - a.modeled_ns;
  p.cpu_ns = sb.cpu_ns - sa.cpu_ns;
  p.stall_ns = sb.stall_ns - sa.stall_ns;
  p.host_ns = sb.host_ns - sa.host_ns;
  p.ns = p.npu_ns + p.cpu_ns + p.stall_ns + p.host_ns;
  p.submits = double(b.submits - a.submits);
  p.tasks = double(b.tasks - a.tasks);
  p.ddr = double(b.modeled_ddr_bytes - a.modeled_ddr_bytes);
  p.switches = double(b.domain_switches - a.domain_switches);
  for (int i = 0; i < 3; ++i) p.busy[i] = b.modeled_core_busy_ns[i] - a.modeled_core_busy_ns[i];
  return p;
}

double per_second(int64_t tokens, double ns) { return tokens > 0 && ns > 0 ? double(tokens) / (ns / 1e9) : 0.0; }
double per_token(double x, int64_t tokens) { return tokens > 0 ? x / double(tokens) : 0.0; }

}  // namespace

BoardSnapshot board_snapshot(const runtime::Engine& engine) {
  BoardSnapshot s;
  s.npu = engine.device()->sim_kernel()->stats();
  if (engine.hybrid() != nullptr) s.cpu_ns = engine.hybrid()->cpu_modeled_ns();
  if (engine.modeled_loads() != nullptr) s.stall_ns = engine.modeled_loads()->stats().stall_ns;
  if (engine.host_meter() != nullptr) s.host_ns = engine.host_meter()->modeled_ns();
  return s;
}

std::string BoardReport::to_json() const {
  const Phase pre = between(start, after_prompt), dec = between(after_prompt, end);
  JsonWriter j;
  j.begin_object();
  j.key("modeled").value(true);
  j.key("profile").value(profile);
  j.key("scope").value(cpu_priced ? "NPU jobs, the schedule's CPU matmuls, waits for streamed weights and host work"
                                   : "NPU jobs, waits for streamed weights and host work");
  j.key("prompt_tokens").value(prompt_tokens);
  j.key("decode_tokens").value(decode_tokens);
  j.key("prefill_modeled_ms").value(pre.ns / 1e6);
  j.key("prefill_tok_per_s").value(per_second(prompt_tokens, pre.ns));
  j.key("decode_modeled_ms_per_token").value(per_token(dec.ns, decode_tokens) / 1e6);
  j.key("decode_tok_per_s").value(per_second(decode_tokens, dec.ns));
  j.key("decode_cpu_modeled_ms_per_token").value(per_token(dec.cpu_ns, decode_tokens) / 1e6);
  j.key("decode_host_modeled_ms_per_token").value(per_token(dec.host_ns, decode_tokens) / 1e6);
  j.key("prefill_host_modeled_ms").value(pre.host_ns / 1e6);
  j.key("decode_stall_modeled_ms_per_token").value(per_token(dec.stall_ns, decode_tokens) / 1e6);
  j.key("prefill_stall_modeled_ms").value(pre.stall_ns / 1e6);
  j.key("submits_per_token").value(per_token(dec.submits, decode_tokens));
  j.key("tasks_per_token").value(per_token(dec.tasks, decode_tokens));
  j.key("ddr_bytes_per_token").value(per_token(dec.ddr, decode_tokens));
  j.key("domain_switches_per_token").value(per_token(dec.switches, decode_tokens));
  j.key("npu_busy_fraction").begin_array();
  for (double b : dec.busy) j.value(dec.ns > 0 ? b / dec.ns : 0.0);
  j.end_array();
  j.key("prefill_submits").value(pre.submits);
  j.end_object();
  return j.str();
}

std::string BoardReport::to_text() const {
  const Phase pre = between(start, after_prompt), dec = between(after_prompt, end);
  char line[512];
  std::snprintf(line, sizeof line,
                "ork: board model (MODELED, profile %s, %s): prompt %.1f tok/s, decode %.1f tok/s, "
                "%.1f submits and %.1f tasks per decoded token, %.2f MB DDR per token, NPU busy %.0f/%.0f/%.0f %%",
                profile.c_str(), cpu_priced ? "NPU jobs, CPU matmuls, weight waits and host work"
                                      : "NPU jobs, weight waits and host work",
                per_second(prompt_tokens, pre.ns), per_second(decode_tokens, dec.ns),
                per_token(dec.submits, decode_tokens), per_token(dec.tasks, decode_tokens),
                per_token(dec.ddr, decode_tokens) / 1e6, dec.ns > 0 ? 100 * dec.busy[0] / dec.ns : 0.0,
                dec.ns > 0 ? 100 * dec.busy[1] / dec.ns : 0.0, dec.ns > 0 ? 100 * dec.busy[2] / dec.ns : 0.0);
  return line;
}

}  // namespace ork::cli
