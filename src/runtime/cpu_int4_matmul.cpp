#include "runtime/cpu_int4_matmul.h"

#include <cstdlib>

#include "core/error.h"
#include "core/quote.h"
#include "quant/decode.h"
#include "model/non_finite.h"
#include "quant/hadamard.h"
#include "quant/requant.h"
#include "quant/requant_int4.h"
#include "weights/packed_int4.h"

namespace ork::runtime {

Int4Scheme Int4Scheme::parse(const std::string& text) {
  Int4Scheme s;
  std::string rest;
  if (text.rfind("w4a8", 0) == 0) {
    rest = text.substr(4);
  } else if (text.rfind("w4a4", 0) == 0) {
    s.a4 = true;
    rest = text.substr(4);
  } else {
    fail("int4 scheme ", quote(text), ": expected w4a8 or w4a4, optionally with -gG (G a multiple of 32 up to 480)");
  }
  if (!rest.empty()) {
    char* end = nullptr;
    const long g = rest.rfind("-g", 0) == 0 ? std::strtol(rest.c_str() + 2, &end, 10) : 0;
    ORK_CHECK(end != nullptr && *end == '\0' && g >= 32 && g <= 480 && g % 32 == 0, "int4 scheme ", quote(text),
              ": the group must be -gG with G a multiple of 32 in [32, 480]");
    s.group = g;
  }
  return s;
}

std::string Int4Scheme::str() const {
  return str_cat(a4 ? "w4a4" : "w4a8", group > 0 ? str_cat("-g", group) : std::string());
}

int64_t CpuInt4Matmul::Weight::row_bytes() const {
  return groups == 0 ? 0 : int64_t(nibbles.size()) / int64_t(scales.size() / size_t(groups));
}

CpuInt4Matmul::Weight CpuInt4Matmul::quantize(const model::Linear& w, const Int4Scheme& scheme, ThreadPool* pool) {
  // The same function packs the NPU's int4 weights (weights/packed_int4.h): equal codes and scales.
  weights::QuantizedRowsI4 q =
      weights::quantize_linear_i4(w, scheme.group > 0 ? scheme.group : w.k, pool);
  Weight r;
  r.group = q.group;
  r.groups = q.groups;
  const int64_t rb = (w.k + 1) / 2;
  r.nibbles.assign(size_t(w.n * rb), 0);
  for (int64_t j = 0; j < w.n; ++j)
    for (int64_t t = 0; t < w.k; ++t) {
      const uint8_t v = uint8_t(q.q[size_t(j * w.k + t)]) & 15;
      r.nibbles[size_t(j * rb + t / 2)] |= t % 2 == 0 ? v : uint8_t(v << 4);
    }
  r.q = std::move(q.q);
  r.scales = std::move(q.scales);
  return r;
}

const CpuInt4Matmul::Weight& CpuInt4Matmul::weight(const model::Linear& w) {
  ORK_CHECK(w.index >= 0 && size_t(w.index) < weights_.size(), "weight ", quote(w.name()), " has no index");
  std::lock_guard lock(mutex_);
  auto& slot = weights_[size_t(w.index)];
  if (!slot) {
    slot = std::make_unique<Weight>(quantize(w, scheme_, &pool_));
    slot->q = {};  // the kernel reads the packed codes
  }
  return *slot;
}

uint64_t CpuInt4Matmul::quantized_bytes() const {
  std::lock_guard lock(mutex_);
  uint64_t b = 0;
  for (const auto& q : weights_) {
    if (q) b += q->nibbles.size() + q->scales.size() * sizeof(float);
  }
  return b;
}

void CpuInt4Matmul::multiply(const Weight& q, int64_t k, int64_t n0, int64_t n, int64_t m, float* y, int64_t ldy) {
  const int8_t* xq = xq_.data();
  const float* sa = sa_.data();
  const int64_t rb = q.row_bytes();
  // y[i][j] = Σ_g (float(Σ_{t in g} xq·wq) · sa[i]) · sw[j][g]: dequantize_i32_groups, inline.
  pool_.parallel_for(n, 8, [&](int64_t j0, int64_t j1) {
    std::vector<int8_t> codes(static_cast<size_t>(k));
    for (int64_t jj = j0; jj < j1; ++jj) {
      const int64_t j = n0 + jj;
      const uint8_t* wr = q.nibbles.data() + j * rb;
      for (int64_t t = 0; t < k; ++t) {
        const int v = t % 2 == 0 ? wr[t / 2] & 15 : wr[t / 2] >> 4;
        codes[size_t(t)] = int8_t(v >= 8 ? v - 16 : v);
      }
      const float* sw = q.scales.data() + j * q.groups;
      for (int64_t i = 0; i < m; ++i) {
        const int8_t* xrow = xq + i * k;
        float acc = 0.0f;
        for (int64_t g = 0; g < q.groups; ++g) {
          const int64_t c0 = g * q.group, c1 = std::min(k, c0 + q.group);
          int32_t s = 0;
          for (int64_t t = c0; t < c1; ++t) s += int32_t(xrow[t]) * int32_t(codes[size_t(t)]);
          const float v = (float(s) * sa[i]) * sw[g];
          acc = g == 0 ? v : acc + v;
        }
        y[i * ldy + jj] = acc;
      }
    }
  });
}

void CpuInt4Matmul::quantize_input(const model::Linear& w, const ActivationSource& in, int64_t m) {
  const ActivationSource src = in.unfold_norm(w);  // the weights carry w's norm weight
  if (scheme_.a4) {
    src.quantize_i4(w, m, xq_, sa_, act_, xr_);
  } else {  // the NPU path's activations: one pass per row
    src.quantize(w, m, xq_, sa_, act_, xr_);
  }
}

void CpuInt4Matmul::matmul(const model::Linear& w, const float* x, int64_t m, float* y) {
  const Weight& q = weight(w);
  quantize_input(w, ActivationSource::rows(x), m);
  multiply(q, w.k, 0, w.n, m, y, w.n);
}

void CpuInt4Matmul::matmul_glu(const model::Linear& down, ops::Glu glu, const float* gate, const float* up,
                               int64_t m, float* act, float* y) {
  (void)act;
  const Weight& q = weight(down);
  quantize_input(down, ActivationSource::gated(glu, gate, up), m);
  multiply(q, down.k, 0, down.n, m, y, down.n);
}

void CpuInt4Matmul::matmul_rows(const model::Linear& w, const float* x, int64_t m, int64_t n0, float* y) {
  matmul_rows(w, ActivationSource::rows(x), m, n0, y);
}

void CpuInt4Matmul::matmul_rows(const model::Linear& w, const ActivationSource& in, int64_t m, int64_t n0, float* y) {
  ORK_CHECK(n0 >= 0 && n0 < w.n, "matmul rows: first row ", n0, " of a ", w.n, "-row weight");
  const Weight& q = weight(w);
  quantize_input(w, in, m);
  multiply(q, w.k, n0, w.n - n0, m, y + n0, w.n);
}

}  // namespace ork::runtime
