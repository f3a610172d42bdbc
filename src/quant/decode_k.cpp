// Decoders of the K formats (256-element super-blocks): Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K.
// The f32 arithmetic and its order are ggml's dequantize_row_*_K: a sub-block scale dl = d * sc and
// offset ml = dmin * m are formed first, then each element is dl * q - ml (Q6_K: (d * sc) * q).
#include "core/fp16.h"
#include "quant/block_io.h"
#include "quant/blocks.h"
#include "quant/decode.h"

namespace ork::quant {
namespace {

// Sub-block j's 6-bit scale and min from the 12 packed bytes of Q4_K / Q5_K (blocks.h).
void scale_min_6bit(const uint8_t (&s)[kKScaleBytes], int j, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 63;
    m = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 0x0f) | (s[j - 4] >> 6) << 4;
    m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
  }
}

}  // namespace

void decode_q2_K(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q2_K, n);
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = detail::load_block<BlockQ2_K>(src, i);
    const float d = f16_to_f32(b.d);
    const float dmin = f16_to_f32(b.dmin);
    for (int h = 0; h < 2; ++h) {
      const uint8_t* q = b.qs + 32 * h;
      for (int g = 0; g < 4; ++g) {
        const int shift = 2 * g;
        for (int half = 0; half < 2; ++half) {
          const uint8_t sc = b.scales[8 * h + 2 * g + half];
          const float dl = d * float(sc & 0x0f);
          const float ml = dmin * float(sc >> 4);
          for (int l = 0; l < 16; ++l) {
            *dst++ = dl * float((q[16 * half + l] >> shift) & 3) - ml;
          }
        }
      }
    }
  }
}

void decode_q3_K(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q3_K, n);
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = detail::load_block<BlockQ3_K>(src, i);
    const float d = f16_to_f32(b.d);
    int scales[16];
    unpack_q3_K_scales(b.scales, scales);
    for (int h = 0; h < 2; ++h) {
      const uint8_t* q = b.qs + 32 * h;
      for (int g = 0; g < 4; ++g) {
        const int shift = 2 * g;
        const uint8_t mask = uint8_t(1u << (4 * h + g));
        for (int half = 0; half < 2; ++half) {
          const float dl = d * float(scales[8 * h + 2 * g + half] - 32);
          for (int l = 16 * half; l < 16 * half + 16; ++l) {
            const int low = (q[l] >> shift) & 3;
            *dst++ = dl * float(low - ((b.hmask[l] & mask) ? 0 : 4));
          }
        }
      }
    }
  }
}

void decode_q4_K(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q4_K, n);
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = detail::load_block<BlockQ4_K>(src, i);
    const float d = f16_to_f32(b.d);
    const float dmin = f16_to_f32(b.dmin);
    for (int p = 0; p < 4; ++p) {
      const uint8_t* q = b.qs + 32 * p;
      int sc, m;
      scale_min_6bit(b.scales, 2 * p, sc, m);
      const float d1 = d * float(sc), m1 = dmin * float(m);
      scale_min_6bit(b.scales, 2 * p + 1, sc, m);
      const float d2 = d * float(sc), m2 = dmin * float(m);
      for (int l = 0; l < 32; ++l) *dst++ = d1 * float(q[l] & 0x0f) - m1;
      for (int l = 0; l < 32; ++l) *dst++ = d2 * float(q[l] >> 4) - m2;
    }
  }
}

void decode_q5_K(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q5_K, n);
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = detail::load_block<BlockQ5_K>(src, i);
    const float d = f16_to_f32(b.d);
    const float dmin = f16_to_f32(b.dmin);
    for (int p = 0; p < 4; ++p) {
      const uint8_t* q = b.qs + 32 * p;
      const uint8_t u1 = uint8_t(1u << (2 * p)), u2 = uint8_t(2u << (2 * p));
      int sc, m;
      scale_min_6bit(b.scales, 2 * p, sc, m);
      const float d1 = d * float(sc), m1 = dmin * float(m);
      scale_min_6bit(b.scales, 2 * p + 1, sc, m);
      const float d2 = d * float(sc), m2 = dmin * float(m);
      for (int l = 0; l < 32; ++l) {
        *dst++ = d1 * float((q[l] & 0x0f) + ((b.qh[l] & u1) ? 16 : 0)) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        *dst++ = d2 * float((q[l] >> 4) + ((b.qh[l] & u2) ? 16 : 0)) - m2;
      }
    }
  }
}

void decode_q6_K(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q6_K, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK_K) {
    const auto b = detail::load_block<BlockQ6_K>(src, i);
    const float d = f16_to_f32(b.d);
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = b.ql + 64 * h;
      const uint8_t* qh = b.qh + 32 * h;
      const int8_t* sc = b.scales + 8 * h;
      float* y = dst + 128 * h;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0x0f) | ((qh[l] >> 0) & 3) << 4) - 32;
        const int q2 = ((ql[l + 32] & 0x0f) | ((qh[l] >> 2) & 3) << 4) - 32;
        const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
        const int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
        y[l] = d * float(sc[is]) * float(q1);
        y[l + 32] = d * float(sc[is + 2]) * float(q2);
        y[l + 64] = d * float(sc[is + 4]) * float(q3);
        y[l + 96] = d * float(sc[is + 6]) * float(q4);
      }
    }
  }
}

void decode_q8_K(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q8_K, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK_K) {
    const auto b = detail::load_block<BlockQ8_K>(src, i);
    for (int j = 0; j < kQK_K; ++j) dst[j] = b.d * float(b.qs[j]);
  }
}

}  // namespace ork::quant
