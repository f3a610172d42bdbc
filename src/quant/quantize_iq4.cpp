// Reference encoders of IQ4_NL and IQ4_XS (simple and deterministic, not ggml's scale search).
//
// A block (IQ4_XS: a sub-block of 32) needs a scale s with x / s inside the grid's range [-127, 113]:
// s = max(max(x) / 113, -min(x) / 127) (0 when the block is all zeros). IQ4_NL stores s rounded up to
// fp16 as d. IQ4_XS stores d = (max_j s_j) / 31 rounded up to fp16 and, per sub-block,
// ls = 32 + min(31, ceil(s_j / d)), so dl = d * (ls - 32) >= s_j up to one rounding. Each element
// takes the grid value nearest to x / scale (the lower index on a tie), against the stored scale as
// decode computes it. The grid's largest gap is 24 (89 to 113), so an element's decoded error is at
// most 12 times its block's scale.
#include <algorithm>
#include <cmath>

#include "core/fp16.h"
#include "quant/block_io.h"
#include "quant/blocks.h"
#include "quant/quantize.h"
#include "quant/rounding.h"
#include "quant/types.h"

namespace ork::quant {
namespace {

// The scale that maps x[0..n) into [-127, 113].
float grid_scale(const float* x, int n) {
  float mx = 0.0f, mn = 0.0f;
  for (int j = 0; j < n; ++j) {
    mx = std::max(mx, x[j]);
    mn = std::min(mn, x[j]);
  }
  return std::max(mx / 113.0f, -mn / 127.0f);
}

// The grid index nearest to x / s (index 8, value 1, when s is 0: it decodes to 0).
int nearest_index(float x, float s) {
  if (s == 0.0f) return 8;
  const float t = x / s;
  int best = 0;
  for (int q = 1; q < 16; ++q)
    if (std::fabs(t - float(kIQ4NLValues[q])) < std::fabs(t - float(kIQ4NLValues[best]))) best = q;
  return best;
}

// 32 elements against scale s as nibbles: element l < 16 in the low nibble of qs[l], 16 + l high.
void pack_indices(const float* x, float s, uint8_t* qs) {
  for (int l = 0; l < 16; ++l)
    qs[l] = uint8_t(nearest_index(x[l], s) | nearest_index(x[l + 16], s) << 4);
}

}  // namespace

void quantize_iq4_nl(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::IQ4_NL, n);
  detail::check_finite(src, n, "iq4_nl", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const float* x = src + i * kQK;
    BlockIQ4_NL b{};
    const float s = grid_scale(x, kQK);
    b.d = s == 0.0f ? uint16_t(0) : detail::f16_ceil(s);
    detail::check_f16_scale(b.d, "iq4_nl", "scale", i);
    pack_indices(x, f16_to_f32(b.d), b.qs);
    detail::store_block(dst, i, b);
  }
}

void quantize_iq4_xs(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::IQ4_XS, n);
  detail::check_finite(src, n, "iq4_xs", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const float* x = src + i * kQK_K;
    BlockIQ4_XS b{};
    float s[8], smax = 0.0f;
    for (int j = 0; j < 8; ++j) smax = std::max(smax, s[j] = grid_scale(x + 32 * j, 32));
    b.d = smax == 0.0f ? uint16_t(0) : detail::f16_ceil(smax / 31.0f);
    detail::check_f16_scale(b.d, "iq4_xs", "scale", i);
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < 8; ++j) {
      const int l = d == 0.0f ? 0 : std::min(31, int(std::ceil(s[j] / d)));
      const int ls = 32 + l;
      b.scales_l[j / 2] = uint8_t(b.scales_l[j / 2] | (ls & 15) << (4 * (j % 2)));
      b.scales_h = uint16_t(b.scales_h | ((ls >> 4) & 3) << (2 * j));
      pack_indices(x + 32 * j, d * float(ls - 32), b.qs + 16 * j);
    }
    detail::store_block(dst, i, b);
  }
}

}  // namespace ork::quant
