#include "runtime/cpu_int4_matmul.h"

#include <cstdlib>

#include "core/error.h"
#include "core/quote.h"
#include "quant/decode.h"
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

CpuInt4Matmul::Weight CpuInt4Matmul::quantize(const model::Linear& w, const Int4Scheme& scheme, ThreadPool* pool) {
  // The same function packs the NPU's int4 weights (weights/packed_int4.h): equal codes and scales.
  weights::QuantizedRowsI4 q =
      weights::quantize_linear_i4(w, scheme.group > 0 ? scheme.group : w.k, pool);
  Weight r;
  r.group = q.group;
  r.groups = q.groups;
  r.q = std::move(q.q);
  r.scales = std::move(q.scales);
  return r;
}

void CpuInt4Matmul::matmul(const model::Linear& w, const float* x, int64_t m, float* y) {
  ORK_CHECK(w.index >= 0 && size_t(w.index) < weights_.size(), "weight ", quote(w.name()), " has no index");
  const Weight* q = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto& slot = weights_[size_t(w.index)];
    if (!slot) slot = std::make_unique<Weight>(quantize(w, scheme_, &pool_));
    q = slot.get();
  }
  const int64_t k = w.k, n = w.n;
  const float* xr = quant::rotate_for_int8(x, m, k, xr_);
  xq_.resize(size_t(m * k));
  sa_.resize(size_t(m));
  if (scheme_.a4) {
    quant::quantize_rows_i4(xr, m, k, xq_.data(), sa_.data());
  } else {
    quant::quantize_rows_i8(xr, m, k, xq_.data(), sa_.data());
  }
  const int8_t* xq = xq_.data();
  const float* sa = sa_.data();
  // y[i][j] = Σ_g (float(Σ_{t in g} xq·wq) · sa[i]) · sw[j][g]: dequantize_i32_groups, inline.
  pool_.parallel_for(n, 8, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const int8_t* wr = q->q.data() + j * k;
      const float* sw = q->scales.data() + j * q->groups;
      for (int64_t i = 0; i < m; ++i) {
        const int8_t* xrow = xq + i * k;
        float acc = 0.0f;
        for (int64_t g = 0; g < q->groups; ++g) {
          const int64_t c0 = g * q->group, c1 = std::min(k, c0 + q->group);
          int32_t s = 0;
          for (int64_t t = c0; t < c1; ++t) s += int32_t(xrow[t]) * int32_t(wr[t]);
          const float v = (float(s) * sa[i]) * sw[g];
          acc = g == 0 ? v : acc + v;
        }
        y[i * n + j] = acc;
      }
    }
  });
}

}  // namespace ork::runtime
