// runtime::CpuInt8Matmul — the CPU int8 path (w8a8): every weight quantized to int8 per output row
// once (weights::quantize_linear, the same function the NPU packing uses: rows rotated by
// quant/hadamard.h, then int8) and multiplied with the rotated (quant::rotate_for_int8)
// per-row int8 activations (quant::quantize_activations_i8: rotation and quantization in one pass
// per row, the input checked finite) by ops::matmul_w8a8_quantized. The reference the NPU path must match bit for bit.
// Thread-safety: one matmul at a time (it runs on the pool); the lazy quantization of a weight on first
// use is guarded by a mutex, so quantized rows are published safely to later callers on any thread.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "core/thread_pool.h"
#include "model/matmul_backend.h"
#include "runtime/activation_source.h"
#include "weights/packed.h"

namespace ork::runtime {

class CpuInt8Matmul final : public model::MatmulBackend {
 public:
  CpuInt8Matmul(ThreadPool& pool, size_t n_weights) : pool_(pool), quantized_(n_weights) {}
  void matmul(const model::Linear& w, const float* x, int64_t m, float* y) override;
  // Output columns [n0, w.n) of y (m × w.n, row stride w.n; columns below n0 are not written): the
  // same numbers matmul() writes there. 0 ≤ n0 < w.n.
  void matmul_rows(const model::Linear& w, const float* x, int64_t m, int64_t n0, float* y);
  // matmul_rows on any input source (ActivationSource: f32 rows or an FFN's glu).
  void matmul_rows(const model::Linear& w, const ActivationSource& in, int64_t m, int64_t n0, float* y);
  // glu(gate, up) quantized row by row as down's input, then matmul; act unused.
  void matmul_glu(const model::Linear& down, ops::Glu glu, const float* gate, const float* up, int64_t m,
                  float* act, float* y) override;
  bool checks_inputs_finite() const override { return true; }
  const char* name() const override { return "cpu-int8"; }
  // RAM of the weights quantized so far (int8 rows and f32 scales).
  uint64_t quantized_bytes() const;

 private:
  ThreadPool& pool_;
  mutable std::mutex mutex_;  // guards the slots of quantized_
  const weights::QuantizedRows& quantized(const model::Linear& w);  // made on first use
  // xq_, sa_ = x (m × w.k) rotated and quantized (quant/quantize_activations.h); a non-finite input
  // throws model::fail_non_finite naming w.
  void quantize_input(const model::Linear& w, const ActivationSource& in, int64_t m);
  std::vector<int8_t> xq_;  // the quantized activations; one matmul at a time
  std::vector<float> sa_, row_, act_;  // their row scales; the row being rotated, its activation
  std::vector<float> ytmp_;  // matmul_rows' columns before they are spread over y's rows
  std::vector<std::unique_ptr<weights::QuantizedRows>> quantized_;  // by Linear::index, on first use
};

}  // namespace ork::runtime
