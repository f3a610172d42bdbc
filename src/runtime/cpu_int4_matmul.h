// runtime::CpuInt4Matmul — the CPU int4 path: the arithmetic of the NPU's int4 tasks (docs/quant.md
// "int4 on the NPU"), used to choose and measure the int4 scheme (`--cpu-int4 SCHEME`).
//   - weights: decoded, rotated by the block-Hadamard transform of the int8 path (quant/hadamard.h),
//     quantized to int4 (quant/requant_int4.h) with one scale per row, or per group of G columns;
//   - activations: rotated likewise, then int8 per row (W4A8: on the NPU, split into two int4 rows,
//     quant/int4_split.h, which gives the same int32 sums) or int4 per row (W4A4);
//   - per group the exact int32 sum, then y = Σ_g (float(sum_g) · sa) · sw_g (requant_int4.h).
// The NPU path `--npu-wtype i4` (runtime/npu_matmul.h) computes w4a8 (per row) bit for bit like
// this one.
// The weights are kept as int4 codes two per byte (0.5 byte per weight, what the board model prices
// for the CPU side of a split call: runtime/cpu_int4_cost.h).
// Thread-safety: one matmul at a time (it runs on the pool); the lazy quantization of a weight on
// first use is guarded by a mutex.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/matmul_backend.h"
#include "runtime/activation_source.h"

namespace ork::runtime {

struct Int4Scheme {
  bool a4 = false;     // false: W4A8 (int8 activations), true: W4A4
  int64_t group = 0;   // weight scale group in K columns (a multiple of 32, ≤ 480); 0: one per row
  // "w4a8", "w4a4", "w4a8-g32", "w4a4-g128", …; throws ork::Error naming the text otherwise.
  static Int4Scheme parse(const std::string& text);
  std::string str() const;
};

class CpuInt4Matmul final : public model::MatmulBackend {
 public:
  CpuInt4Matmul(ThreadPool& pool, size_t n_weights, Int4Scheme scheme)
      : pool_(pool), scheme_(scheme), weights_(n_weights) {}
  void matmul(const model::Linear& w, const float* x, int64_t m, float* y) override;
  // Output columns [n0, w.n) of y (m × w.n, row stride w.n; columns below n0 are not written): the
  // same numbers matmul() writes there. 0 ≤ n0 < w.n. (The CPU side of a call split along N with
  // the NPU, runtime/hybrid_matmul.h.)
  void matmul_rows(const model::Linear& w, const float* x, int64_t m, int64_t n0, float* y);
  // matmul_rows on any input source (ActivationSource: f32 rows or an FFN's glu).
  void matmul_rows(const model::Linear& w, const ActivationSource& in, int64_t m, int64_t n0, float* y);
  // W4A8: glu(gate, up) quantized row by row as down's input; W4A4: glu into act, then matmul.
  void matmul_glu(const model::Linear& down, ops::Glu glu, const float* gate, const float* up, int64_t m,
                  float* act, float* y) override;
  bool checks_inputs_finite() const override { return true; }
  const char* name() const override { return "cpu-int4"; }
  // RAM of the weights quantized so far (codes two per byte, and the scales).
  uint64_t quantized_bytes() const;

  struct Weight {
    int64_t group = 0, groups = 0;
    std::vector<int8_t> q;         // n × k codes −7..7 (from quantize(); emptied once packed)
    std::vector<uint8_t> nibbles;  // the codes two per byte: row j at j·row_bytes(), column t in
                                   // byte t / 2, the even column in the low nibble
    std::vector<float> scales;     // n × groups
    int64_t row_bytes() const;
  };
  // The int4 weight of `w` under `scheme` (decode, rotate, quantize).
  static Weight quantize(const model::Linear& w, const Int4Scheme& scheme, ThreadPool* pool);

 private:
  // The cached weight of `w` (quantized and packed on first use).
  const Weight& weight(const model::Linear& w);
  // xq_, sa_ = the input (m × w.k) rotated and quantized per row (int8, or int4 for W4A4); a
  // non-finite input throws model::fail_non_finite naming w.
  void quantize_input(const model::Linear& w, const ActivationSource& in, int64_t m);
  // y (m × n, row stride ldy) = columns [n0, n0 + n) of the product with the quantized input.
  void multiply(const Weight& q, int64_t k, int64_t n0, int64_t n, int64_t m, float* y, int64_t ldy);
  ThreadPool& pool_;
  Int4Scheme scheme_;
  mutable std::mutex mutex_;
  std::vector<float> xr_;  // the rotated rows (W4A4: all of them; W4A8: the one being quantized)
  std::vector<float> act_;  // a glu input's activation (W4A8: one row; W4A4: all of them)
  std::vector<int8_t> xq_;
  std::vector<float> sa_;
  std::vector<std::unique_ptr<Weight>> weights_;
};

}  // namespace ork::runtime
