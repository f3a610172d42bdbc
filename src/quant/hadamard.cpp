#include "quant/hadamard.h"

#include <cmath>

#include "core/checked.h"
#include "core/error.h"

namespace ork::quant {

int64_t hadamard_block(int64_t k) {
  ORK_CHECK(k >= 1, "hadamard_block: K ", k, " (need K >= 1)");
  int64_t b = 1;
  while (b < kMaxHadamardBlock && k % (b * 2) == 0) b *= 2;
  return b;
}

void hadamard_rotate_rows(float* x, int64_t m, int64_t k, int64_t block) {
  ORK_CHECK(m >= 0 && k >= 1 && block >= 1 && is_pow2(uint64_t(block)) && k % block == 0,
            "hadamard_rotate_rows: block ", block, " is not a power of two dividing K ", k, " (M ", m, ")");
  if (block == 1) return;
  const float norm = float(1.0 / std::sqrt(double(block)));
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t b0 = 0; b0 < k; b0 += block) {
      float* v = x + r * k + b0;
      for (int64_t h = 1; h < block; h *= 2) {
        for (int64_t i = 0; i < block; i += 2 * h) {
          for (int64_t j = i; j < i + h; ++j) {
            const float a = v[j], c = v[j + h];
            v[j] = a + c;
            v[j + h] = a - c;
          }
        }
      }
      for (int64_t i = 0; i < block; ++i) v[i] *= norm;
    }
  }
}

const float* rotate_for_int8(const float* x, int64_t m, int64_t k, std::vector<float>& buf) {
  const int64_t b = int8_rotation_block(k);
  if (b == 1) return x;
  buf.assign(x, x + m * k);
  hadamard_rotate_rows(buf.data(), m, k, b);
  return buf.data();
}

}  // namespace ork::quant
