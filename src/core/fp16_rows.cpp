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

}  // namespace ork
