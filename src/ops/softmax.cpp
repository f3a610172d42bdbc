#include "ops/softmax.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "ops/cpu_features.h"
#include "ops/exp_fast.h"

namespace ork::ops {
namespace {

using lanes::kLanes;
using lanes::splat;
using lanes::V8;
typedef double D4 __attribute__((vector_size(32)));  // four double lanes: one AVX2 register

// e = exp_fast(v − mx), 0 where v is −inf; stored to out and added, widened, to the lane sums: lanes
// 0–3 in lo, 4–7 in hi (two 4-lane halves rather than one 8-lane double vector, which the AVX2
// clone kept on the stack; attention_bench BM_DecodeF16Short, one thread, 32–256 keys: the
// attention 3–5 % shorter, medians of 8 alternating processes).
[[gnu::always_inline]] inline void exp_lanes(V8 v, float mx, float* out, D4& lo, D4& hi) {
  const V8 e = lanes::exp_fast(v - mx);
  const V8 zero = splat(0.0f);
  const V8 kept = v == splat(-std::numeric_limits<float>::infinity()) ? zero : e;
  lanes::store(out, kept);
  lo += __builtin_convertvector(__builtin_shufflevector(kept, kept, 0, 1, 2, 3), D4);
  hi += __builtin_convertvector(__builtin_shufflevector(kept, kept, 4, 5, 6, 7), D4);
}

}  // namespace

ORK_VECTOR_CLONES void softmax(float* x, int64_t n) {
  ORK_CHECK(n >= 1, "ops::softmax: n=", n, " must be >= 1");
  // The maximum, eight lanes at a time (exact in any order; NaN is skipped unless x[0] is one, as in
  // the one-lane loop it replaces).
  V8 m8 = splat(x[0]);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const V8 v = lanes::load(x + i);
    m8 = v > m8 ? v : m8;
  }
  float mx = x[0];
  for (int l = 0; l < kLanes; ++l) mx = m8[l] > mx ? m8[l] : mx;
  for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  D4 lo = {}, hi = {};
  i = 0;
  for (; i + kLanes <= n; i += kLanes) exp_lanes(lanes::load(x + i), mx, x + i, lo, hi);
  if (i < n) {  // the last partial group through the same code: −inf pads add 0 to their lanes
    float pad[kLanes], out[kLanes];
    for (int l = 0; l < kLanes; ++l) pad[l] = -std::numeric_limits<float>::infinity();
    std::memcpy(pad, x + i, size_t(n - i) * sizeof(float));
    exp_lanes(lanes::load(pad), mx, out, lo, hi);
    std::memcpy(x + i, out, size_t(n - i) * sizeof(float));
  }
  const double total = ((lo[0] + hi[0]) + (lo[2] + hi[2])) + ((lo[1] + hi[1]) + (lo[3] + hi[3]));
  const float inv = float(1.0 / total);
  for (int64_t j = 0; j < n; ++j) x[j] *= inv;
}

}  // namespace ork::ops
