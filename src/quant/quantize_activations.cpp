#include "quant/quantize_activations.h"

#include <algorithm>

#include "core/error.h"
#include "core/non_finite.h"
#include "quant/hadamard.h"
#include "quant/requant.h"

namespace ork::quant {

int64_t quantize_activations_i8(const float* x, int64_t m, int64_t k, int8_t* q, float* scales,
                                std::vector<float>& row) {
  ORK_CHECK(m >= 0 && k >= 1, "quantize_activations_i8: shape ", m, " x ", k);
  const int64_t block = int8_rotation_block(k);
  row.resize(size_t(k));
  for (int64_t r = 0; r < m; ++r) {
    const float* xr = x + r * k;
    if (const int64_t bad = first_non_finite(xr, k); bad >= 0) return r * k + bad;
    const float* src = xr;
    if (block > 1) {
      std::copy(xr, xr + k, row.begin());
      hadamard_rotate_rows(row.data(), 1, k, block);
      src = row.data();
    }
    quantize_rows_i8(src, 1, k, q + r * k, scales + r);
  }
  return -1;
}

}  // namespace ork::quant
