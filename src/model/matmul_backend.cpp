#include "model/matmul_backend.h"

#include "ops/matmul.h"

namespace ork::model {

void CpuMatmul::matmul(const Linear& w, const float* x, int64_t m, float* y) {
  ops::matmul(pool_, x, m, w.k, w.w->data, w.w->type, w.n, y, mode_);
}

}  // namespace ork::model
