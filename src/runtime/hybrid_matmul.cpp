#include "runtime/hybrid_matmul.h"

#include <cstdio>
#include <cstring>

#include "core/json.h"

namespace ork::runtime {

namespace {

// "blk.3.attn_q.weight" → "attn_q"; names outside the blocks keep their stem ("output").
std::string role(std::string_view name) {
  if (name.substr(0, 4) == "blk.") {
    const size_t dot = name.find('.', 4);
    if (dot != std::string_view::npos) name.remove_prefix(dot + 1);
  }
  if (name.size() > 7 && name.substr(name.size() - 7) == ".weight") name.remove_suffix(7);
  return std::string(name);
}

}  // namespace

HybridMatmul::HybridMatmul(std::unique_ptr<NpuMatmul> npu, ThreadPool& pool, size_t n_weights, Scheduler scheduler,
                           bool skip_cpu_arithmetic)
    : npu_(std::move(npu)), cpu_(pool, n_weights), scheduler_(std::move(scheduler)),
      skip_cpu_arithmetic_(skip_cpu_arithmetic) {}

const Choice& HybridMatmul::decide(std::span<const model::Linear* const> ws, int64_t m) {
  const auto key = std::make_tuple(ws[0]->index, ws.size(), m);
  auto it = memo_.find(key);
  if (it == memo_.end()) {
    std::vector<int64_t> ns;
    std::string what;
    for (const model::Linear* w : ws) {
      ns.push_back(w->n);
      what += (what.empty() ? "" : "+") + role(w->name());
    }
    const Choice c = scheduler_.choose(m, ws[0]->k, ns);
    // One Decision per (role, m): every layer's Q/K/V share one entry.
    size_t d = 0;
    while (d < decisions_.size() && !(decisions_[d].what == what && decisions_[d].m == m)) ++d;
    if (d == decisions_.size()) decisions_.push_back({what, m, c, 0});
    it = memo_.emplace(key, d).first;
  }
  ScheduleStats::Decision& d = decisions_[it->second];
  d.calls++;
  return d.choice;
}

void HybridMatmul::run_cpu(const model::Linear& w, const float* x, int64_t m, float* y) {
  cpu_calls_++;
  cpu_modeled_ns_ += npu::sim::cost_cpu_matmul_ns(scheduler_.profile(), m, w.k, w.n);
  if (skip_cpu_arithmetic_) {
    std::memset(y, 0, size_t(m * w.n) * sizeof(float));
    return;
  }
  cpu_.matmul(w, x, m, y);
}

void HybridMatmul::matmul(const model::Linear& w, const float* x, int64_t m, float* y) {
  const model::Linear* one[] = {&w};
  if (decide(one, m).cpu) {
    run_cpu(w, x, m, y);
    return;
  }
  npu_calls_++;
  npu_->matmul(w, x, m, y);
}

void HybridMatmul::matmul_group(std::span<const model::Linear* const> ws, const float* x, int64_t m,
                                std::span<float* const> ys) {
  if (decide(ws, m).cpu) {
    for (size_t i = 0; i < ws.size(); ++i) run_cpu(*ws[i], x, m, ys[i]);
    return;
  }
  npu_calls_++;
  npu_->matmul_group(ws, x, m, ys);
}

ScheduleStats HybridMatmul::stats() const {
  ScheduleStats s;
  s.schedule = schedule_name(scheduler_.schedule());
  s.profile = scheduler_.profile().name;
  s.fixed_reason = scheduler_.fixed_reason();
  s.npu_calls = npu_calls_;
  s.cpu_calls = cpu_calls_;
  s.cpu_modeled_ns = cpu_modeled_ns_;
  s.cpu_weight_bytes = cpu_.quantized_bytes();
  s.decisions = decisions_;
  return s;
}

std::string ScheduleStats::to_json() const {
  JsonWriter j;
  j.begin_object();
  j.key("schedule").value(schedule);
  j.key("profile").value(profile);
  j.key("modeled").value(true);
  if (!fixed_reason.empty()) j.key("fixed_reason").value(fixed_reason);
  j.key("npu_calls").value(npu_calls);
  j.key("cpu_calls").value(cpu_calls);
  j.key("cpu_modeled_ms").value(cpu_modeled_ns / 1e6);
  j.key("cpu_weight_bytes").value(cpu_weight_bytes);
  j.key("decisions").begin_array();
  for (const Decision& d : decisions) {
    j.begin_object();
    j.key("weights").value(d.what);
    j.key("m").value(d.m);
    j.key("device").value(d.choice.cpu ? "cpu" : "npu");
    j.key("npu_modeled_us").value(d.choice.npu_ns / 1e3);
    j.key("cpu_modeled_us").value(d.choice.cpu_ns / 1e3);
    j.key("calls").value(d.calls);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str();
}

std::string ScheduleStats::to_text() const {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "ork: schedule %s (MODELED choices, profile %s): %llu calls on the npu, %llu on the cpu%s%s",
                schedule.c_str(), profile.c_str(), (unsigned long long)npu_calls, (unsigned long long)cpu_calls,
                fixed_reason.empty() ? "" : "; everything on the npu: ", fixed_reason.c_str());
  out += line;
  for (const Decision& d : decisions) {
    std::snprintf(line, sizeof line, "\nork: schedule   %-28s m=%-4lld -> %s (npu %.1f us, cpu %.1f us modeled; %llu calls)",
                  d.what.c_str(), (long long)d.m, d.choice.cpu ? "cpu" : "npu", d.choice.npu_ns / 1e3,
                  d.choice.cpu_ns / 1e3, (unsigned long long)d.calls);
    out += line;
  }
  return out;
}

}  // namespace ork::runtime
