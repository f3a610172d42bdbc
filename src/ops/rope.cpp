#include "ops/rope.h"

#include <cmath>
#include <vector>

#include "core/error.h"

namespace ork::ops {

void rope(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos, float freq_base,
          float freq_scale, RopeMode mode, const float* freq_factors) {
  ORK_CHECK(n_heads >= 0, "ops::rope: n_heads=", n_heads, " is negative");
  ORK_CHECK(head_dim >= 1, "ops::rope: head_dim=", head_dim, " must be >= 1");
  ORK_CHECK(n_rot > 0 && n_rot <= head_dim && n_rot % 2 == 0, "ops::rope: n_rot=", n_rot,
            " must be even and in (0, head_dim=", head_dim, "]");
  ORK_CHECK(pos >= 0, "ops::rope: pos=", pos, " is negative");
  ORK_CHECK(freq_base > 0.0f && std::isfinite(freq_base), "ops::rope: freq_base=", freq_base,
            " must be finite and > 0");
  const int64_t half = n_rot / 2;
  thread_local std::vector<float> cs;  // [cos θ_0, sin θ_0, cos θ_1, sin θ_1, ...]
  cs.resize(size_t(n_rot));
  const float theta_scale = std::pow(freq_base, -2.0f / float(n_rot));
  float t = float(pos);
  for (int64_t i = 0; i < half; ++i) {
    // t / 1.0f == t exactly, so no factors and all-ones factors give the same bits.
    const float ff = freq_factors != nullptr ? freq_factors[i] : 1.0f;
    ORK_CHECK(ff > 0.0f && std::isfinite(ff), "ops::rope: freq_factors[", i, "] = ", ff,
              " must be finite and > 0");
    const float theta = freq_scale * (t / ff);
    cs[size_t(2 * i)] = std::cos(theta);
    cs[size_t(2 * i + 1)] = std::sin(theta);
    t *= theta_scale;
  }
  rope_rotate(x, n_heads, head_dim, half, mode, cs.data());
}

void rope_rotate(float* x, int64_t n_heads, int64_t head_dim, int64_t half, RopeMode mode, const float* cs) {
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const float c = cs[size_t(2 * i)];
      const float s = cs[size_t(2 * i + 1)];
      const int64_t ia = mode == RopeMode::kNormal ? 2 * i : i;
      const int64_t ib = mode == RopeMode::kNormal ? 2 * i + 1 : i + half;
      const float a = v[ia];
      const float b = v[ib];
      v[ia] = a * c - b * s;
      v[ib] = a * s + b * c;
    }
  }
}

}  // namespace ork::ops
