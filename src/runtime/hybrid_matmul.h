// runtime::HybridMatmul — the MatmulBackend of an NPU device with a schedule (runtime/schedule.h):
// each call (one linear, or a group sharing one input) runs on the NPU (NpuMatmul), on the CPU's
// w8a8 int8 path (CpuInt8Matmul) — for int4 device weights (`--npu-wtype i4`) the CPU int4 path
// with the same scheme, w4a8 per row, or w4a4 for `--npu-wtype i4a4` (CpuInt4Matmul) — or split
// along N — the input quantized once,
// then the first rows of every weight on the NPU (on an AsyncCall thread), the other rows on the
// CPU's pool at the same time — as the Scheduler
// chooses for its shape. All compute the same integers, so the tokens are the same whichever it
// picks (tests/runtime/schedule_test.cpp).
//
// Modeled time: the simulator charges the NPU jobs; cpu_modeled_ns() holds the rest of the board
// time — the calls run on the CPU, and for a split call the time it outlasts its NPU job.
//
// The CPU copy of a weight (int8 rows and scales; int4: codes two per byte and scales) is made on
// its first CPU call and kept
// (stats().cpu_weight_bytes). With a timing-only simulator the CPU calls skip their arithmetic too
// (outputs zero, meaningless as the simulator's), but their modeled time is counted.
// Thread-safety: one forward pass at a time (as every backend); stats() between passes.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/thread_pool.h"
#include "model/matmul_backend.h"
#include "runtime/async_call.h"
#include "runtime/cpu_int4_matmul.h"
#include "runtime/cpu_int8_matmul.h"
#include "runtime/npu_matmul.h"
#include "runtime/schedule.h"

namespace ork::runtime {

struct ScheduleStats {
  std::string schedule;          // auto | npu | cpu
  std::string profile;           // the board profile the choices came from
  std::string fixed_reason;      // why auto keeps everything on the NPU ("" when it decides per call)
  uint64_t npu_calls = 0, cpu_calls = 0;
  uint64_t split_calls = 0;
  double cpu_modeled_ns = 0;     // Σ modeled board time the CPU adds (CPU calls; split calls beyond their NPU job)
  uint64_t cpu_weight_bytes = 0; // RAM of the CPU copies of weights (int8 rows + scales)
  struct Decision {
    std::string what;            // the weights' names without the layer prefix ("attn_q+attn_k+attn_v")
    int64_t m = 0;               // rows of the call
    Choice choice;
    uint64_t calls = 0;
  };
  std::vector<Decision> decisions;  // one per (what, m), in first-seen order
  std::string to_json() const;
  std::string to_text() const;      // lines for --stats, each starting "ork: schedule"
};

class HybridMatmul final : public model::MatmulBackend {
 public:
  // skip_cpu_arithmetic: the device is a timing-only simulator.
  HybridMatmul(std::unique_ptr<NpuMatmul> npu, ThreadPool& pool, size_t n_weights, Scheduler scheduler,
               bool skip_cpu_arithmetic);
  void matmul(const model::Linear& w, const float* x, int64_t m, float* y) override;
  void matmul_group(std::span<const model::Linear* const> ws, const float* x, int64_t m,
                    std::span<float* const> ys) override;
  // Where the schedule puts down, glu(gate, up) quantized row by row (once for both sides of a split);
  // act unused.
  void matmul_glu(const model::Linear& down, ops::Glu glu, const float* gate, const float* up, int64_t m,
                  float* act, float* y) override;
  // gate/up where the schedule puts them, their results unscaled on the NPU side (NpuMatmul::matmul_sums)
  // and scaled inside down's quantizing pass, down where the schedule puts it (its NPU side's results
  // unscaled too); the default's two calls when gate/up run on the CPU alone or cannot fuse
  // (NpuMatmul::runs_as_one_job). The same bits either way.
  // gate/up's input rows (model::ResidualNorm) are computed inside the quantizing pass of whichever
  // side runs them (once for both sides of a split).
  model::UnscaledRows ffn(const model::Linear& gate, const model::Linear& up, const model::Linear& down,
                          ops::Glu glu, const model::ResidualNorm& in, int64_t m, float* gate_out, float* up_out,
                          float* act, float* y) override;
  // Where the schedule puts them, the NPU side's results unscaled (its columns of a split call); the
  // input rows computed inside the quantizing pass, as ffn's.
  void matmul_group_unscaled(std::span<const model::Linear* const> ws, const model::ResidualNorm& in, int64_t m,
                             std::span<float* const> ys, std::span<model::UnscaledRows> out) override;
  model::UnscaledRows matmul_unscaled(const model::Linear& w, const float* x, int64_t m, float* y) override;
  void expect_experts(int64_t layer, std::span<const int32_t> experts, bool guess) override {
    npu_->expect_experts(layer, experts, guess);
  }
  // Every call quantizes (and so checks) its input, unless a timing-only simulator's CPU calls skip
  // their arithmetic.
  bool checks_inputs_finite() const override { return !skip_cpu_arithmetic_; }
  const char* name() const override { return npu_->name(); }
  NpuMatmul& npu() { return *npu_; }
  ScheduleStats stats() const;
  double cpu_modeled_ns() const { return cpu_modeled_ns_; }

 private:
  // The CPU path of the device weight type: cpu_ (i8) or cpu_i4_ (i4).
  void cpu_matmul_rows(const model::Linear& w, const ActivationSource& in, int64_t m, int64_t n0, float* y);
  // The decision for this call (made once per (weights, m) and remembered), its calls counted.
  const Choice& decide(std::span<const model::Linear* const> ws, int64_t m);
  void run_cpu(const model::Linear& w, const ActivationSource& in, int64_t m, float* y);
  // in: f32 rows, or (one weight only) an FFN's glu. sums: the NPU side's results left unscaled
  // (NpuMatmul::matmul_sums, described by NpuMatmul::describe_sums).
  void run_split(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                 std::span<float* const> ys, const Choice& c, bool sums = false);
  // One call of weights sharing an input where choice c puts it.
  void run_group(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                 std::span<float* const> ys, const Choice& c);
  // run_group with the NPU side's results left unscaled where it can (NpuMatmul::runs_as_one_job), out[i]
  // describing ys[i].
  void run_group_unscaled(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                          std::span<float* const> ys, const Choice& c, std::span<model::UnscaledRows> out);

  std::unique_ptr<NpuMatmul> npu_;
  CpuInt8Matmul cpu_;
  std::unique_ptr<CpuInt4Matmul> cpu_i4_;  // set when the scheduler's wtype is i4
  Scheduler scheduler_;
  bool skip_cpu_arithmetic_;
  std::map<std::tuple<int32_t, size_t, int64_t>, size_t> memo_;  // (first index, count, m) → decisions_
  std::vector<ScheduleStats::Decision> decisions_;
  AsyncCall npu_thread_;  // runs the NPU part of split calls
  std::vector<int8_t> split_xq_;  // a split call's input, quantized once for both sides
  std::vector<float> split_sa_, split_act_, split_rot_;
  std::vector<float> ffn_sa_;  // ffn(): the row scales of gate/up's input, read by down's quantizing pass
  uint64_t npu_calls_ = 0, cpu_calls_ = 0, split_calls_ = 0;
  double cpu_modeled_ns_ = 0;
};

}  // namespace ork::runtime
