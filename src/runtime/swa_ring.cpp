#include "runtime/swa_ring.h"

#include <algorithm>

namespace ork::runtime {

std::vector<int64_t> swa_ring_rows(const model::Config& c, int64_t n_ctx, int64_t m_max) {
  std::vector<int64_t> rows(size_t(c.n_layer), 0);
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const int64_t w = c.window(l);
    if (w <= 0) continue;
    const int64_t r = w + std::max<int64_t>(m_max, 1) - 1;
    if (r < n_ctx) rows[size_t(l)] = r;
  }
  return rows;
}

uint64_t kv_cache_bytes_ring(const model::Config& c, int64_t n_ctx, model::KvType type, int64_t m_max) {
  const std::vector<int64_t> rows = swa_ring_rows(c, n_ctx, m_max);
  uint64_t b = 0;
  for (int64_t r : rows) b += uint64_t(r > 0 ? r : n_ctx) * model::kv_row_bytes(type, c.kv_dim());
  return 2 * b;
}

}  // namespace ork::runtime
