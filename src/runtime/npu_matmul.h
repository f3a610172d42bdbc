// runtime::NpuMatmul — the MatmulBackend that runs every linear layer on the NPU (or its simulator).
//
// Per call: the activations are rotated (quant::rotate_for_int8, as the packed weights were) and
// quantized per row to int8 (quant::quantize_rows_i8), each weight
// slice is acquired from the Cache (pinned while used; the prefetcher is told so it loads ahead),
// the device computes int32 = int8 · int8ᵀ in chunks of at most Plan::m_max rows, and the results
// are dequantized with activation × weight scales (quant::dequantize_i32). That is the same integer
// math as ops::matmul_w8a8, so results are bit-identical to the CPU int8 path.
// int4 weights (a plan of wtype kI4, weights/packed_int4.h): W4A8 by splitting — the int8 codes are
// split into two int4 rows each (quant/int4_split.h), the device computes the int32 sums of both
// halves with int4 tasks in the same cached, core-spread and grouped jobs as int8 (npu/matmul.h,
// npu/task_split_int4.h), the host combines them with the weight's per-row corrections and
// dequantizes with the per-row scales: the arithmetic of the CPU int4 path `--cpu-int4 w4a8`
// (runtime/cpu_int4_matmul.h), bit for bit. W4A4 (set_int4_activations): the activations are
// quantized to int4 instead and are the job's rows themselves, one per token (`--cpu-int4 w4a4`'s
// arithmetic).
// Thread-safety: one matmul at a time (it uses the device scratch); a scratch shared between two
// NpuMatmuls must be used by one of them at a time (runtime::Engine serializes them).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "model/matmul_backend.h"
#include "runtime/activation_source.h"
#include "npu/device.h"
#include "npu/matmul.h"
#include "weights/cache.h"
#include "weights/expert_prefetch.h"
#include "weights/modeled_loads.h"
#include "weights/prefetcher.h"

namespace ork::runtime {

class NpuMatmul final : public model::MatmulBackend {
 public:
  // Reserves the matmul scratch of every planned domain now (growing `scratch` when given: a scratch
  // shared with another NpuMatmul of the same device; else one of its own). `prefetcher` may be null.
  NpuMatmul(npu::Device& device, weights::Cache& cache, weights::Prefetcher* prefetcher,
            std::shared_ptr<npu::MatmulScratch> scratch = nullptr);
  void matmul(const model::Linear& w, const float* x, int64_t m, float* y) override;
  // glu(gate, up) quantized row by row as down's input (ActivationSource), then matmul; act unused.
  void matmul_glu(const model::Linear& down, ops::Glu glu, const float* gate, const float* up, int64_t m,
                  float* act, float* y) override;
  // One job per chunk of rows when every weight is one resident slice of the same domain (Q/K/V,
  // gate/up); otherwise one matmul after another. Bit-identical to separate matmul() calls.
  void matmul_group(std::span<const model::Linear* const> ws, const float* x, int64_t m,
                    std::span<float* const> ys) override;
  // FFN with gate and up as one job whose int32 results stay unscaled until down's quantizing pass
  // (ActivationSource::gated_sums) when runs_as_one_job({gate, up}); otherwise the default's two calls.
  // down's results unscaled when runs_as_one_job({down}). int8 and int4 weights alike: their int32
  // sums are scaled the same way (after combining the halves for W4A8).
  // gate/up's input rows (model::ResidualNorm) computed inside their quantizing pass (one job) or
  // materialized first (the default's two calls).
  model::UnscaledRows ffn(const model::Linear& gate, const model::Linear& up, const model::Linear& down,
                          ops::Glu glu, const model::ResidualNorm& in, int64_t m, float* gate_out, float* up_out,
                          float* act, float* y) override;
  // Unscaled (matmul_sums) when runs_as_one_job(ws), the input rows computed inside the quantizing pass;
  // otherwise the default's (materialized rows, f32 results of matmul_group / matmul).
  void matmul_group_unscaled(std::span<const model::Linear* const> ws, const model::ResidualNorm& in, int64_t m,
                             std::span<float* const> ys, std::span<model::UnscaledRows> out) override;
  model::UnscaledRows matmul_unscaled(const model::Linear& w, const float* x, int64_t m, float* y) override;
  // The results matmul_sums left in ys described for their reader (input_scales(), weight_scales):
  // the first rows[i] columns (rows empty: all) unscaled.
  void describe_sums(std::span<const model::Linear* const> ws, std::span<float* const> ys,
                     std::span<const int64_t> rows, std::span<model::UnscaledRows> out);
  // matmul() on any input source (ActivationSource: f32 rows, an FFN's glu, quantized rows, GatedSums).
  void matmul(const model::Linear& w, const ActivationSource& in, int64_t m, float* y);
  // matmul_rows (rows empty: matmul_group) with the results left unscaled: the int32 sums as bit patterns
  // in ys's float storage (GatedSums' layout), input_scales() the input's row scales they go with.
  // Requires runs_as_one_job(ws).
  void matmul_sums(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                   std::span<float* const> ys, std::span<const int64_t> rows);
  // The row scales of the last call's quantized input (m of them; valid until the next call).
  const float* input_scales() const { return sa_.data(); }
  // The row scales of w's device copy (w.n of them), which its int32 results are scaled by.
  const float* weight_scales(const model::Linear& w);
  // Whether these weights run as one job (matmul_group's, or matmul_rows' over their first rows):
  // each one resident int8 slice, all in one domain, same K.
  bool runs_as_one_job(std::span<const model::Linear* const> ws);
  // The first rows[i] output columns of each ys[i] (row stride ws[i]->n; the other columns are not
  // written), as one job per chunk over the first rows[i] rows of each weight (npu::rows_view);
  // rows[i] a multiple of the kernel group (32 i8, 64 i4) below ws[i]->n. The same numbers matmul_group writes there. Requires
  // runs_as_one_job(ws).
  void matmul_rows(std::span<const model::Linear* const> ws, const float* x, int64_t m, std::span<float* const> ys,
                   std::span<const int64_t> rows);
  void matmul_rows(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                   std::span<float* const> ys, std::span<const int64_t> rows);
  // matmul_rows of one weight on any input source (ActivationSource: f32 rows or an FFN's glu).
  void matmul_rows(const model::Linear& w, const ActivationSource& in, int64_t m, float* y, int64_t rows);
  // Streamed plans: the prefetcher loads the named experts of the layer's expert block (and no other
  // expert of it) ahead of compute. A guess is named only under ExpertPrefetch::kPredict; under kNone
  // the layer's block is named empty until its router names it.
  // With model_loads: a guessed expert that a later naming drops, and whose units the cache loaded
  // since their last acquire, is charged to the modeled loader as wasted (ModeledLoads::charge_wasted).
  void expect_experts(int64_t layer, std::span<const int32_t> experts, bool guess) override;
  bool checks_inputs_finite() const override { return true; }
  // Whether decode guesses are named to the prefetcher (default kPredict). Call between passes.
  void set_expert_prefetch(weights::ExpertPrefetch p) { expert_prefetch_ = p; }
  // int4 weights with int4 activations (`--npu-wtype i4a4`, W4A4): each token is one int4 row of
  // the job, quantized by ActivationSource::quantize_i4 — the arithmetic of `--cpu-int4 w4a4`, bit
  // for bit. No effect on int8 weights. Call before the first matmul.
  void set_int4_activations(bool a4) { int4_activations_ = a4; }
  bool int4_activations() const { return int4_activations_; }
  const char* name() const override { return device_.caps().simulated ? "sim" : "npu"; }
  const npu::MatmulScratch& scratch() const { return *scratch_; }

  // From now on every unit this backend acquires from its own cache is also timed by `loads` in the
  // board model's time, `now_ns` giving compute's modeled time (simulator only; both must outlive
  // this).
  void model_loads(weights::ModeledLoads* loads, std::function<double()> now_ns);

  // From now on weight `weight` (Linear::index) runs on unit(s) of `other_weight` in `other` (a
  // resident cache of the same device holding identical packed bytes and scales; must outlive this).
  void redirect(int32_t weight, weights::Cache& other, int32_t other_weight);

 private:
  struct Source {
    weights::Cache* cache = nullptr;  // null: this backend's own cache
    int32_t weight = -1;
  };
  // Where weight `w` is read from: its cache (this backend's or a redirect's) and index there.
  std::pair<weights::Cache*, int32_t> source(const model::Linear& w);
  // One job per chunk over resident single-slice weights (runs_as_one_job); rows empty: every row.
  // sums: the int32 results written unscaled (matmul_sums).
  void run_resident_group(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                          std::span<float* const> ys, std::span<const int64_t> rows, bool sums = false);
  // matmul() of one weight on any input source: slice by slice, streamed or resident.
  void run(const model::Linear& w, const ActivationSource& in, int64_t m, float* y);
  // run_resident_group with the results left unscaled, out[i] describing ys[i]. Requires runs_as_one_job(ws).
  void run_sums_unscaled(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                         std::span<float* const> ys, std::span<model::UnscaledRows> out);
  // xq_, sa_ = the input (m × w.k) rotated and quantized per row, as the packed weights were
  // (ActivationSource::quantize, one pass per row); a non-finite input throws
  // model::fail_non_finite naming w.
  // i4: int4 weights, whose input's norm weight is divided out first (ActivationSource::unfold_norm);
  // a4 (W4A4): int4 codes instead (ActivationSource::quantize_i4).
  void quantize_input(const model::Linear& w, const ActivationSource& in, int64_t m, bool i4, bool a4);
  // halves_ = xq_ (m × k) split into two int4 rows per token (quant/int4_split.h).
  void split_input(int64_t m, int64_t k);
  // The int32 sums of mc tokens × rows [n0, n0 + ns) of int4 weight `w` from the sums r (2mc × ns)
  // of its split rows and the weight's corrections (in c_, returned).
  const int32_t* combine_halves(const model::Linear& w, const weights::Cache& cache, int32_t widx,
                                const int32_t* r, int64_t mc, int64_t n0, int64_t ns);
  npu::Device& device_;
  weights::Cache& cache_;
  weights::Prefetcher* prefetcher_;
  std::shared_ptr<npu::MatmulScratch> scratch_;
  std::vector<Source> redirect_;  // by Linear::index
  weights::ModeledLoads* modeled_loads_ = nullptr;
  std::function<double()> modeled_now_;
  std::vector<uint64_t> seen_loads_;  // [unit] cache load count at its previous acquire
  std::vector<int32_t> layer_block_;  // [layer] its index in Plan::expert_blocks, or -1
  // [expert block][expert] modeled timeline since when it is named without a break (exact or guessed),
  // or -1 when it is not named now
  std::vector<std::vector<double>> named_at_;
  // [expert block][expert] named by a guess that no exact naming has confirmed yet
  std::vector<std::vector<uint8_t>> guessed_;
  weights::ExpertPrefetch expert_prefetch_ = weights::ExpertPrefetch::kPredict;
  bool int4_activations_ = false;
  std::vector<int8_t> xq_;
  std::vector<float> sa_, ytmp_, row_, act_;  // row_, act_: the input row being rotated, its activation
  std::vector<float> ffn_sa_;  // ffn(): the row scales of gate/up's input, read by down's quantizing pass
  std::vector<int32_t> c_;
  std::vector<int8_t> halves_;          // int4: the split activation rows (2 per token)
  std::vector<int32_t> r_;              // int4: sums of the halves (2m × n)
  std::vector<std::vector<int32_t>> group_c_;  // [part] int32 results of a grouped job
};

}  // namespace ork::runtime
