// runtime::CpuInt8Matmul — the CPU int8 path (w8a8): every weight quantized to int8 per output row
// once (weights::quantize_linear, the same function the NPU packing uses: rows rotated by
// quant/hadamard.h, then int8) and multiplied with the rotated (quant::rotate_for_int8)
// per-row int8 activations by ops::matmul_w8a8. The reference the NPU path must match bit for bit.
// Thread-safety: one matmul at a time (it runs on the pool); the lazy quantization of a weight on first
// use is guarded by a mutex, so quantized rows are published safely to later callers on any thread.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "core/thread_pool.h"
#include "model/matmul_backend.h"
#include "weights/packed.h"

namespace ork::runtime {

class CpuInt8Matmul final : public model::MatmulBackend {
 public:
  CpuInt8Matmul(ThreadPool& pool, size_t n_weights) : pool_(pool), quantized_(n_weights) {}
  void matmul(const model::Linear& w, const float* x, int64_t m, float* y) override;
  // Output columns [n0, w.n) of y (m × w.n, row stride w.n; columns below n0 are not written): the
  // same numbers matmul() writes there. 0 ≤ n0 < w.n.
  void matmul_rows(const model::Linear& w, const float* x, int64_t m, int64_t n0, float* y);
  const char* name() const override { return "cpu-int8"; }
  // RAM of the weights quantized so far (int8 rows and f32 scales).
  uint64_t quantized_bytes() const;

 private:
  ThreadPool& pool_;
  mutable std::mutex mutex_;  // guards the slots of quantized_
  const weights::QuantizedRows& quantized(const model::Linear& w);  // made on first use
  std::vector<float> xr_;  // the rotated activations (quant/hadamard.h); one matmul at a time
  std::vector<float> ytmp_;  // matmul_rows' columns before they are spread over y's rows
  std::vector<std::unique_ptr<weights::QuantizedRows>> quantized_;  // by Linear::index, on first use
};

}  // namespace ork::runtime
