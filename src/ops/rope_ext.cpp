#include "ops/rope_ext.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"

namespace ork::ops {
namespace {

float corr_dim(int64_t n_rot, int64_t n_ctx_orig, float rotations, float base) {
  return float(n_rot) * std::log(float(n_ctx_orig) / (rotations * 2.0f * float(M_PI))) / (2.0f * std::log(base));
}

}  // namespace

void rope_yarn_corr_dims(int64_t n_rot, int64_t n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                         float dims[2]) {
  const float start = std::floor(corr_dim(n_rot, n_ctx_orig, beta_fast, freq_base));
  const float end = std::ceil(corr_dim(n_rot, n_ctx_orig, beta_slow, freq_base));
  dims[0] = std::max(0.0f, start);
  dims[1] = std::min(float(n_rot - 1), end);
}

void rope_ext(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos, float freq_base,
              float freq_scale, RopeMode mode, const float* freq_factors, const RopeExt& ext) {
  ORK_CHECK(n_heads >= 0, "ops::rope_ext: n_heads=", n_heads, " is negative");
  ORK_CHECK(head_dim >= 1, "ops::rope_ext: head_dim=", head_dim, " must be >= 1");
  ORK_CHECK(n_rot > 0 && n_rot <= head_dim && n_rot % 2 == 0, "ops::rope_ext: n_rot=", n_rot,
            " must be even and in (0, head_dim=", head_dim, "]");
  ORK_CHECK(pos >= 0, "ops::rope_ext: pos=", pos, " is negative");
  ORK_CHECK(freq_base > 0.0f && std::isfinite(freq_base), "ops::rope_ext: freq_base=", freq_base,
            " must be finite and > 0");
  ORK_CHECK(std::isfinite(ext.ext_factor), "ops::rope_ext: ext_factor=", ext.ext_factor, " is not finite");
  ORK_CHECK(ext.attn_factor > 0.0f && std::isfinite(ext.attn_factor), "ops::rope_ext: attn_factor=",
            ext.attn_factor, " must be finite and > 0");
  ORK_CHECK(ext.ext_factor == 0.0f || ext.n_ctx_orig > 0, "ops::rope_ext: YaRN needs n_ctx_orig > 0 (got ",
            ext.n_ctx_orig, ")");
  float dims[2] = {0.0f, 0.0f};
  float mscale = ext.attn_factor;
  if (ext.ext_factor != 0.0f) {
    rope_yarn_corr_dims(n_rot, ext.n_ctx_orig, freq_base, ext.beta_fast, ext.beta_slow, dims);
    mscale *= 1.0f + 0.1f * std::log(1.0f / freq_scale);
  }
  const int64_t half = n_rot / 2;
  thread_local std::vector<float> cs;  // [cos θ_0, sin θ_0, cos θ_1, sin θ_1, ...], times m
  cs.resize(size_t(n_rot));
  const float theta_scale = std::pow(freq_base, -2.0f / float(n_rot));
  float t = float(pos);
  for (int64_t i = 0; i < half; ++i) {
    const float ff = freq_factors != nullptr ? freq_factors[i] : 1.0f;
    ORK_CHECK(ff > 0.0f && std::isfinite(ff), "ops::rope_ext: freq_factors[", i, "] = ", ff,
              " must be finite and > 0");
    const float extrap = t / ff;
    const float interp = freq_scale * extrap;
    float theta = interp;
    if (ext.ext_factor != 0.0f) {
      const float y = (float(i) - dims[0]) / std::max(0.001f, dims[1] - dims[0]);
      const float mix = (1.0f - std::min(1.0f, std::max(0.0f, y))) * ext.ext_factor;
      theta = interp * (1.0f - mix) + extrap * mix;
    }
    cs[size_t(2 * i)] = std::cos(theta) * mscale;
    cs[size_t(2 * i + 1)] = std::sin(theta) * mscale;
    t *= theta_scale;
  }
  rope_rotate(x, n_heads, head_dim, half, mode, cs.data());
}

}  // namespace ork::ops
