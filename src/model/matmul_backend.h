// MatmulBackend — the one entry point through which every linear layer of the forward pass runs.
//
// The CPU implementation computes on the GGUF bytes directly; device backends (the NPU, the
// simulated NPU) implement the same interface, so the forward pass does not know where a matmul ran.
// Thread-safety: a backend instance is used by one forward pass at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/huge_page_arena.h"
#include "core/thread_pool.h"
#include "model/residual_norm.h"
#include "model/unscaled_rows.h"
#include "model/weights.h"
#include "ops/activation.h"
#include "ops/matmul.h"
#include "ops/qpanels.h"

namespace ork::model {

// ork::Error unless gate and up each give down.k values (what an FFN's fused form relies on).
void check_ffn_shapes(const Linear& gate, const Linear& up, const Linear& down);

class MatmulBackend {
 public:
  virtual ~MatmulBackend() = default;
  // y[m × w.n] = x[m × w.k] · Wᵀ (the bias is not added here). x and y are row-major f32.
  virtual void matmul(const Linear& w, const float* x, int64_t m, float* y) = 0;
  // ys[i][m × ws[i]->n] = x · ws[i]ᵀ for linears that read the same input (equal k: a layer's Q/K/V,
  // or its gate and up). A device backend may run them as one job; by default one after another.
  virtual void matmul_group(std::span<const Linear* const> ws, const float* x, int64_t m,
                            std::span<float* const> ys);
  // y[m × down.n] = glu(gate, up) · downᵀ: an FFN's activation and down projection (the bias is not
  // added). gate, up: m × down.k. By default glu(gate, up) is written into `act` (m × down.k scratch,
  // checked finite unless checks_inputs_finite()) and multiplied by matmul(); a quantizing backend
  // fuses the activation into quantizing down's input, row by row, and leaves `act` unwritten.
  virtual void matmul_glu(const Linear& down, ops::Glu glu, const float* gate, const float* up, int64_t m,
                          float* act, float* y);
  // matmul_group over the rows of `in` (model/residual_norm.h: the normed residual stream, its pending
  // add done by the reader), whose results a quantizing backend may leave unscaled for their reader:
  // out[i] describes ys[i] (model/unscaled_rows.h; its scales valid until this backend's next call).
  // in's stream rows are written by the time it returns. A NaN/Inf in the rows throws
  // model::fail_non_finite naming ws[0] ("input of"). By default in.materialize(), matmul_group, every
  // out[i] f32; a quantizing backend computes each row inside its quantizing pass.
  virtual void matmul_group_unscaled(std::span<const Linear* const> ws, const ResidualNorm& in, int64_t m,
                                     std::span<float* const> ys, std::span<UnscaledRows> out);
  // The same for one weight.
  virtual UnscaledRows matmul_unscaled(const Linear& w, const float* x, int64_t m, float* y);
  // A dense FFN whose gate and up have no bias, over the rows x of `in` (as matmul_group_unscaled):
  // y[m × down.n] = glu(x · gateᵀ, x · upᵀ) · downᵀ (down's bias not added), returned as UnscaledRows
  // over y (as matmul_unscaled). gate_out, up_out (m × gate.n = m × down.k each) and act (m × down.k)
  // are scratch whose contents afterwards are unspecified: a fusing backend keeps the unscaled int32
  // results in gate_out/up_out and scales them inside down's quantizing pass (runtime/activation_source.h,
  // GatedSums), the same bits as unfused. y may be in.h or in's branch (read before y is written).
  // By default in.materialize(), matmul_group(gate, up), then matmul_glu: f32 rows.
  virtual UnscaledRows ffn(const Linear& gate, const Linear& up, const Linear& down, ops::Glu glu,
                           const ResidualNorm& in, int64_t m, float* gate_out, float* up_out, float* act, float* y);
  // The forward pass names the routed experts of MoE layer `layer` in the order it will run them:
  // after the layer's router ran (`guess` false), or a guess for a layer whose router has not run
  // yet (`guess` true: model::ExpertPredictor); empty: none known yet. A backend that streams weights
  // loads exactly those ahead (weights/expert_route.h); the default ignores it. Results never depend
  // on it.
  virtual void expect_experts(int64_t layer, std::span<const int32_t> experts, bool guess) {
    (void)layer, (void)experts, (void)guess;
  }
  // True when matmul and matmul_group themselves throw model::fail_non_finite(x, at, k, "input of", w)
  // for a NaN/Inf in their input (checked while quantizing it), so the forward pass skips its own scan.
  virtual bool checks_inputs_finite() const { return false; }
  // Short name for messages and statistics ("cpu", "npu", "sim").
  virtual const char* name() const = 0;

 protected:
  // in's rows as f32 (in.materialize(m)), checked finite as w's input unless checks_inputs_finite().
  const float* input_rows(const Linear& w, const ResidualNorm& in, int64_t m);
};

// Matmul on the CPU over the GGUF block formats (ops::matmul), multi-threaded on `pool`.
// mode kExact (the default; the reference the model tests compare at 1e-4) decodes W to f32;
// kFast quantizes activations to 8 bits and uses the SIMD integer kernels (docs/ops.md).
//
// With kFast and `file` given, every linear of `weights` of a panel type (ops::QPanels::supports) is
// packed once, here, into ops::QPanels when the CPU has a vector panel kernel for it
// (ops::best_panel_isa: AVX2, AVX-512 VNNI, NEON dot-product); those linears
// then run from the packed copy (the same numbers on every ISA, docs/ops.md) and their pages of the
// mapped file are dropped from this process (they are re-read from the file if touched again), so
// resident memory holds one copy. packed_bytes() is the RAM the copies take. The copies share one
// HugePageArena (2 MiB pages where the kernel has transparent huge pages): decode reads all of them
// every token.
class CpuMatmul final : public MatmulBackend {
 public:
  explicit CpuMatmul(ThreadPool& pool, ops::MatmulMode mode = ops::MatmulMode::kExact,
                     const Weights* weights = nullptr, const gguf::File* file = nullptr);
  void matmul(const Linear& w, const float* x, int64_t m, float* y) override;
  // Linears packed in panels that take the same activations (ops::same_activations) run as one
  // ops::matmul_qpanels_group (X quantized once, one parallel loop); the others one by one.
  void matmul_group(std::span<const Linear* const> ws, const float* x, int64_t m,
                    std::span<float* const> ys) override;
  // The default's arithmetic, with the activation computed in parallel on the pool; with kFast its
  // exp is the vectorized one of ops/activation_fast.h (within 1e-6 of expf's).
  void matmul_glu(const Linear& down, ops::Glu glu, const float* gate, const float* up, int64_t m, float* act,
                  float* y) override;
  const char* name() const override { return "cpu"; }
  uint64_t packed_bytes() const { return packed_bytes_; }

 private:
  const ops::QPanels* panels_of(const Linear& w) const {
    return w.index >= 0 && size_t(w.index) < panels_.size() ? panels_[size_t(w.index)].get() : nullptr;
  }

  // The idle prefetch: a forward pass calls the linears in the same order every step, so after a
  // panel matmul each of the pool's waiting workers prefetches the start of its own part of the
  // panel call that came next last time (ThreadPool::prefetch_while_idle: the part a decode loop
  // gives it) while the caller runs the norms, RoPE, attention between; into its own cache, where
  // its part of that loop reads it. (The start of the caller's part, prefetched by a worker into
  // that worker's cache, gained nothing: docs/ops.md.)
  static constexpr size_t kIdlePrefetchBytes = 512 << 10;
  static constexpr size_t kMaxHintedPanels = 4;  // a larger group (none today: Q/K/V is 3) gets no hint
  // A panel call of `panels` (one linear or a group) starting with linear `index`: ends the idle
  // prefetch, records the call and that it followed the last one.
  void follow(int32_t index, std::span<const ops::QPanels* const> panels);
  void prefetch_next(int32_t index);  // ... and ended: hint its successor's panels

  ThreadPool& pool_;
  ops::MatmulMode mode_;
  std::unique_ptr<HugePageArena> arena_;  // the panels' memory; declared first, destroyed last
  std::vector<std::unique_ptr<ops::QPanels>> panels_;  // by Linear::index; null: GGUF layout
  std::vector<int32_t> next_;  // by Linear::index: the panel call that followed it last, or -1
  std::vector<std::vector<const ops::QPanels*>> calls_;  // by first Linear::index: its call's panels
  int32_t last_ = -1;          // the last panel linear run
  uint64_t packed_bytes_ = 0;
};

}  // namespace ork::model
