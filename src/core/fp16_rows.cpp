#include "core/fp16_rows.h"

#include <cstring>

#include "core/fp16.h"

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace ork {
namespace {

void scalar(const uint16_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(src[i]);
}

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void f16c(const uint16_t* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  }
  scalar(src + i, n - i, dst + i);
}

__attribute__((target("avx,f16c"))) void f16c_narrow(const float* src, int64_t n, uint16_t* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = f32_to_f16(src[i]);
}

// One call for many rows; flatten inlines f16c (same target) into the loop.
__attribute__((target("avx,f16c"), flatten)) void f16c_rows(const uint16_t* src, int64_t rows, int64_t n,
                                                 int64_t src_stride, float* dst) {
  for (int64_t r = 0; r < rows; ++r) f16c(src + r * src_stride, n, dst + r * n);
}

bool has_f16c() {
  static const bool yes = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return yes;
}
#endif

}  // namespace

void f16_to_f32_n(const uint16_t* src, int64_t n, float* dst) {
#if defined(__x86_64__)
  if (has_f16c()) {
    f16c(src, n, dst);
    return;
  }
#elif defined(__aarch64__)
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i))));
  src += i, dst += i, n -= i;
#endif
  scalar(src, n, dst);
}

void f16_to_f32_rows(const uint16_t* src, int64_t rows, int64_t n, int64_t src_stride, float* dst) {
#if defined(__x86_64__)
  if (has_f16c()) {
    f16c_rows(src, rows, n, src_stride, dst);
    return;
  }
#endif
  for (int64_t r = 0; r < rows; ++r) f16_to_f32_n(src + r * src_stride, n, dst + r * n);
}

void f32_to_f16_n(const float* src, int64_t n, uint16_t* dst) {
#if defined(__x86_64__)
  if (has_f16c()) {
    f16c_narrow(src, n, dst);
    return;
  }
#elif defined(__aarch64__)
  // FCVTN rounds by FPCR.RMode: round to nearest, ties to even, as Linux leaves it.
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1_u16(dst + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(src + i))));
  src += i, dst += i, n -= i;
#endif
  for (int64_t i = 0; i < n; ++i) dst[i] = f32_to_f16(src[i]);
}

}  // namespace ork
