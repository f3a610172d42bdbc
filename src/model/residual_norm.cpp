#include "model/residual_norm.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "ops/norm.h"

namespace ork::model {

ResidualNorm ResidualNorm::normed(const float* x, const float* norm, float eps, int64_t width, float* h,
                                  ThreadPool* pool) {
  ResidualNorm r;
  r.base = x;
  r.norm = norm;
  r.eps = eps;
  r.width = width;
  r.h = h;
  r.pool = pool;
  return r;
}

void ResidualNorm::check() const {
  ORK_CHECK(width >= 1 && base != nullptr, "residual input: ", width, " values per row, base ",
            base != nullptr ? "set" : "null");
  if (branch.y == nullptr) return;
  ORK_CHECK(branch.n == width, "residual add: a branch of ", branch.n, " values per row, ", width, " wanted");
  ORK_CHECK(stream_out != nullptr && stream_out != base, "residual add: the stream must be written to a buffer "
            "other than its base");
}

void ResidualNorm::row(int64_t i, float* out, float* scratch) const {
  const int64_t E = width;
  const float* s = base + i * E;
  if (branch.y != nullptr) {
    const float* b = branch.y + i * E;
    if (branch.n_sums > 0) {
      branch.row(i, scratch);
      b = scratch;
    }
    if (post_norm != nullptr) {
      ops::rmsnorm(b, post_norm, E, eps, scratch);  // in place when b is scratch
      b = scratch;
    }
    float* x = stream_out + i * E;
    for (int64_t j = 0; j < E; ++j) x[j] = s[j] + b[j];
    s = x;
  }
  if (norm != nullptr) {
    ops::rmsnorm(s, norm, E, eps, out);
  } else if (out != s) {
    std::copy(s, s + E, out);
  }
}

const float* ResidualNorm::materialize_into(int64_t m, float* out) const {
  check();
  ORK_CHECK(out != nullptr && out != base && out != stream_out, "residual input: no buffer for its rows");
  const auto rows = [&](int64_t i0, int64_t i1) {
    thread_local std::vector<float> scratch;  // one branch row scaled and post-normed
    if (scratch.size() < size_t(width)) scratch.resize(size_t(width));
    for (int64_t i = i0; i < i1; ++i) row(i, out + i * width, scratch.data());
  };
  if (pool != nullptr) {
    pool->parallel_for(m, 1, rows);  // rows are independent
  } else {
    rows(0, m);
  }
  return out;
}

}  // namespace ork::model
