#include "runtime/hybrid_matmul.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.h"
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
      skip_cpu_arithmetic_(skip_cpu_arithmetic) {
  ORK_CHECK(npu_->int4_activations() == scheduler_.int4_activations(),
            "hybrid matmul: the NPU backend and the schedule disagree on int4 activations");
  if (scheduler_.wtype() == npu::Dtype::kI4) {  // packed_int4.h's weights; W4A8, or W4A4 for i4a4
    cpu_i4_ = std::make_unique<CpuInt4Matmul>(pool, n_weights,
                                              Int4Scheme::parse(scheduler_.int4_activations() ? "w4a4" : "w4a8"));
  }
}

void HybridMatmul::cpu_matmul_rows(const model::Linear& w, const ActivationSource& in, int64_t m, int64_t n0,
                                   float* y) {
  if (cpu_i4_ != nullptr) {
    cpu_i4_->matmul_rows(w, in, m, n0, y);
  } else {
    cpu_.matmul_rows(w, in, m, n0, y);
  }
}

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
    const bool can_split = npu_->runs_as_one_job(ws);
    const Choice c = scheduler_.choose(m, ws[0]->k, ns, can_split);
    if (!can_split && scheduler_.schedule() == Schedule::kAuto) what += " (several slices: not split)";
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

void HybridMatmul::run_cpu(const model::Linear& w, const ActivationSource& in, int64_t m, float* y) {
  cpu_calls_++;
  cpu_modeled_ns_ += scheduler_.cpu_ns(m, w.k, w.n);
  if (skip_cpu_arithmetic_) {
    if (in.residual != nullptr) in.residual->materialize(m);  // the stream rows are written all the same
    std::memset(y, 0, size_t(m * w.n) * sizeof(float));
    return;
  }
  cpu_matmul_rows(w, in, m, 0, y);
}

void HybridMatmul::run_split(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                             std::span<float* const> ys, const Choice& c, bool sums) {
  ORK_CHECK(in.up == nullptr || ws.size() == 1, "split call: a gated input feeds one weight, not ", ws.size());
  split_calls_++;
  // The simulator charges the NPU job (split_npu_ns); the board time beyond it is the CPU's share.
  cpu_modeled_ns_ += std::max(0.0, c.split_ns - c.split_npu_ns);
  // One quantization of the input (and one finiteness check), read by both sides.
  // int4 weights carry their input's norm weight (weights/packed_int4.h): divided out of the rows.
  const ActivationSource src =
      scheduler_.wtype() == npu::Dtype::kI4 ? in.unfold_norm(*ws[0]) : in;
  if (scheduler_.int4_activations()) {
    src.quantize_i4(*ws[0], m, split_xq_, split_sa_, split_act_, split_rot_);
  } else {
    src.quantize(*ws[0], m, split_xq_, split_sa_, split_act_, split_rot_);
  }
  const ActivationSource q = ActivationSource::quantized(split_xq_.data(), split_sa_.data());
  npu_thread_.start([&] {
    if (sums) {
      npu_->matmul_sums(ws, q, m, ys, c.npu_rows);
    } else {
      npu_->matmul_rows(ws, q, m, ys, c.npu_rows);
    }
  });
  try {
    for (size_t i = 0; i < ws.size(); ++i) {
      if (skip_cpu_arithmetic_) {
        for (int64_t r = 0; r < m; ++r) {
          std::memset(ys[i] + r * ws[i]->n + c.npu_rows[i], 0, size_t(ws[i]->n - c.npu_rows[i]) * sizeof(float));
        }
      } else {
        cpu_matmul_rows(*ws[i], q, m, c.npu_rows[i], ys[i]);
      }
    }
  } catch (...) {
    npu_thread_.wait();  // never leave the NPU part running over outputs the caller may free
    throw;
  }
  npu_thread_.wait();
}

void HybridMatmul::run_group(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                             std::span<float* const> ys, const Choice& c) {
  if (c.split) {
    run_split(ws, in, m, ys, c);
  } else if (c.cpu) {
    for (size_t i = 0; i < ws.size(); ++i) run_cpu(*ws[i], in, m, ys[i]);
  } else if (ws.size() == 1) {
    npu_calls_++;
    npu_->matmul(*ws[0], in, m, ys[0]);
  } else {
    npu_calls_++;
    ORK_CHECK(in.up == nullptr && in.sums == nullptr && in.xq == nullptr && in.unfold == nullptr,
              "a group call reads f32 rows");
    npu_->matmul_group(ws, in.residual != nullptr ? in.residual->materialize(m) : in.x, m, ys);
  }
}

void HybridMatmul::matmul(const model::Linear& w, const float* x, int64_t m, float* y) {
  const model::Linear* one[] = {&w};
  float* outs[] = {y};
  run_group(one, ActivationSource::rows(x), m, outs, decide(one, m));
}

void HybridMatmul::matmul_group(std::span<const model::Linear* const> ws, const float* x, int64_t m,
                                std::span<float* const> ys) {
  run_group(ws, ActivationSource::rows(x), m, ys, decide(ws, m));
}

void HybridMatmul::matmul_glu(const model::Linear& down, ops::Glu glu, const float* gate, const float* up,
                              int64_t m, float* act, float* y) {
  (void)act;
  const model::Linear* one[] = {&down};
  float* outs[] = {y};
  run_group(one, ActivationSource::gated(glu, gate, up), m, outs, decide(one, m));
}

void HybridMatmul::run_group_unscaled(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                                      std::span<float* const> ys, const Choice& c,
                                      std::span<model::UnscaledRows> out) {
  if (c.cpu || !npu_->runs_as_one_job(ws)) {  // f32 results
    run_group(ws, in, m, ys, c);
    for (size_t i = 0; i < ws.size(); ++i) out[i] = model::UnscaledRows::f32(ys[i], ws[i]->n);
    return;
  }
  if (c.split) {  // the NPU's columns unscaled, the CPU's f32
    run_split(ws, in, m, ys, c, true);
    npu_->describe_sums(ws, ys, c.npu_rows, out);
    return;
  }
  npu_calls_++;
  npu_->matmul_sums(ws, in, m, ys, {});
  npu_->describe_sums(ws, ys, {}, out);
}

void HybridMatmul::matmul_group_unscaled(std::span<const model::Linear* const> ws, const model::ResidualNorm& in,
                                         int64_t m, std::span<float* const> ys, std::span<model::UnscaledRows> out) {
  ORK_CHECK(out.size() == ws.size() && ys.size() == ws.size(), "matmul group: ", ws.size(), " weights, ", ys.size(),
            " outputs, ", out.size(), " results");
  run_group_unscaled(ws, ActivationSource::residual_rows(&in), m, ys, decide(ws, m), out);
}

model::UnscaledRows HybridMatmul::matmul_unscaled(const model::Linear& w, const float* x, int64_t m, float* y) {
  const model::Linear* one[] = {&w};
  float* ys[] = {y};
  model::UnscaledRows out[1];
  run_group_unscaled(one, ActivationSource::rows(x), m, ys, decide(one, m), out);
  return out[0];
}

model::UnscaledRows HybridMatmul::ffn(const model::Linear& gate, const model::Linear& up, const model::Linear& down,
                                      ops::Glu glu, const model::ResidualNorm& in, int64_t m, float* gate_out,
                                      float* up_out, float* act, float* y) {
  (void)act;
  const model::Linear* gu[] = {&gate, &up};
  const model::Linear* one[] = {&down};
  float* gu_out[] = {gate_out, up_out};
  float* outs[] = {y};
  model::UnscaledRows out[1];
  const Choice& c = decide(gu, m);
  if (c.cpu || !npu_->runs_as_one_job(gu)) {  // no unscaled gate/up results to carry over
    run_group(gu, ActivationSource::residual_rows(&in), m, gu_out, c);
    run_group_unscaled(one, ActivationSource::gated(glu, gate_out, up_out), m, outs, decide(one, m), out);
    return out[0];
  }
  model::check_ffn_shapes(gate, up, down);
  model::UnscaledRows both[2];
  run_group_unscaled(gu, ActivationSource::residual_rows(&in), m, gu_out, c, both);
  ffn_sa_.assign(both[0].sa, both[0].sa + m);  // the next call's input scales replace these
  GatedSums sums{both[0], both[1]};
  sums.gate.sa = sums.up.sa = ffn_sa_.data();
  run_group_unscaled(one, ActivationSource::gated_sums(glu, &sums), m, outs, decide(one, m), out);
  return out[0];
}

ScheduleStats HybridMatmul::stats() const {
  ScheduleStats s;
  s.schedule = schedule_name(scheduler_.schedule());
  s.profile = scheduler_.profile().name;
  s.fixed_reason = scheduler_.fixed_reason();
  s.npu_calls = npu_calls_;
  s.cpu_calls = cpu_calls_;
  s.split_calls = split_calls_;
  s.cpu_modeled_ns = cpu_modeled_ns_;
  s.cpu_weight_bytes = cpu_.quantized_bytes() + (cpu_i4_ != nullptr ? cpu_i4_->quantized_bytes() : 0);
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
  j.key("split_calls").value(split_calls);
  j.key("cpu_modeled_ms").value(cpu_modeled_ns / 1e6);
  j.key("cpu_weight_bytes").value(cpu_weight_bytes);
  j.key("decisions").begin_array();
  for (const Decision& d : decisions) {
    j.begin_object();
    j.key("weights").value(d.what);
    j.key("m").value(d.m);
    j.key("device").value(d.choice.device());
    j.key("npu_modeled_us").value(d.choice.npu_ns / 1e3);
    j.key("cpu_modeled_us").value(d.choice.cpu_ns / 1e3);
    if (d.choice.split_ns > 0) j.key("split_modeled_us").value(d.choice.split_ns / 1e3);
    if (d.choice.split) {
      j.key("npu_rows").begin_array();
      for (int64_t r : d.choice.npu_rows) j.value(r);
      j.end_array();
    }
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
                "ork: schedule %s (MODELED choices, profile %s): %llu calls on the npu, %llu on the cpu, %llu split%s%s",
                schedule.c_str(), profile.c_str(), (unsigned long long)npu_calls, (unsigned long long)cpu_calls,
                (unsigned long long)split_calls,
                fixed_reason.empty() ? "" : "; everything on the npu: ", fixed_reason.c_str());
  out += line;
  for (const Decision& d : decisions) {
    char split[96] = "";
    if (d.choice.split_ns > 0) std::snprintf(split, sizeof split, ", split %.1f us", d.choice.split_ns / 1e3);
    std::snprintf(line, sizeof line, "\nork: schedule   %-28s m=%-4lld -> %-5s (npu %.1f us, cpu %.1f us%s modeled; %llu calls)",
                  d.what.c_str(), (long long)d.m, d.choice.device(), d.choice.npu_ns / 1e3, d.choice.cpu_ns / 1e3,
                  split, (unsigned long long)d.calls);
    out += line;
  }
  return out;
}

}  // namespace ork::runtime
