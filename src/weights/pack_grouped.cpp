#include "weights/pack_grouped.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "npu/matmul.h"
#include "quant/decode.h"
#include "quant/hadamard.h"
#include "quant/requant.h"

namespace ork::weights {

PackedHost pack_linear_grouped(const model::Linear& w, npu::Dtype dtype, ThreadPool* pool) {
  using npu::Dtype;
  ORK_CHECK(w.w != nullptr && w.k > 0 && w.n > 0, "pack_linear_grouped: empty weight");
  PackedHost p;
  p.n = w.n;
  p.k = w.k;
  p.dtype = dtype;
  p.bytes.resize(packed_bytes(w.n, w.k, dtype));
  if (dtype == Dtype::kI8) p.scales.resize(size_t(w.n));

  const int64_t group = npu::b_n_group(dtype);
  const int64_t groups = (w.n + group - 1) / group;
  const int64_t np = npu::pad_n(w.n, dtype);
  const int64_t kp = npu::pad_k(w.k);
  const int64_t segments = npu::k_segments(kp, dtype);
  const int64_t eb = npu::elt_bytes(dtype);
  const int64_t row_bytes = quant::row_bytes(w.w->type, w.k);
  const uint64_t slice_bytes = packed_bytes(group, w.k, dtype);

  auto run = [&](int64_t g0, int64_t g1) {
    std::vector<float> f(size_t(w.k));
    std::vector<int8_t> q;
    std::vector<uint16_t> h;
    if (dtype == Dtype::kI8) q.resize(size_t(group * w.k)); else h.resize(size_t(group * w.k));
    std::vector<uint8_t> slice(slice_bytes);
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t n0 = g * group;
      const int64_t rows = w.n - n0 < group ? w.n - n0 : group;
      for (int64_t r = 0; r < rows; ++r) {
        quant::decode_row(w.w->type, w.w->data + (n0 + r) * row_bytes, f.data(), w.k);
        if (dtype == Dtype::kI8) {
          quant::hadamard_rotate_rows(f.data(), 1, w.k, quant::int8_rotation_block(w.k));
          quant::quantize_weights_i8(f.data(), 1, w.k, q.data() + r * w.k, p.scales.data() + n0 + r);
        } else {
          quant::to_f16(f.data(), w.k, h.data() + r * w.k);
        }
      }
      // The slice packed alone is one N block per K segment; place each at its spot in the whole.
      if (dtype == Dtype::kI8) {
        npu::pack_weight_into(q.data(), rows, w.k, slice.data());
      } else {
        npu::pack_weight_into_f16(h.data(), rows, w.k, slice.data());
      }
      for (int64_t s = 0; s < segments; ++s) {
        const int64_t ks = npu::b_segment_width(s, kp, dtype);
        std::memcpy(p.bytes.data() + npu::b_segment_offset(s, np, dtype) + n0 * ks * eb,
                    slice.data() + npu::b_segment_offset(s, group, dtype), size_t(group * ks * eb));
      }
    }
  };
  if (pool != nullptr && groups > 1) {
    pool->parallel_for(groups, 1, run);
  } else {
    run(0, groups);
  }
  return p;
}

}  // namespace ork::weights
