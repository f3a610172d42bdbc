#include "ops/gemm_i8.h"

#include <algorithm>

#include "core/error.h"
#include "ops/qkernels.h"

namespace ork::ops {
namespace {

constexpr int64_t kTileN = 16;  // B rows per task

}  // namespace

void gemm_i8(ThreadPool* pool, const int8_t* a, const int8_t* b, int64_t m, int64_t n, int64_t k,
             int32_t* c) {
  ORK_CHECK(m >= 0 && n >= 0 && k >= 0, "ops::gemm_i8: negative shape M=", m, " N=", n, " K=", k);
  ORK_CHECK(k <= kGemmI8MaxK, "ops::gemm_i8: K=", k, " exceeds ", kGemmI8MaxK,
            " (int32 accumulators could overflow)");
  if (m == 0 || n == 0) return;

  const auto dot_i8 = qkernels(best_isa()).dot_i8;  // exact on every ISA
  const int64_t n_tiles = (n + kTileN - 1) / kTileN;
  const RowSplit rs = split_rows(m, n_tiles, pool != nullptr ? pool->size() : 1, 4);
  const int64_t m_blocks = rs.blocks, m_per = rs.per;

  auto body = [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t j0 = (task / m_blocks) * kTileN;
      const int64_t j1 = std::min(n, j0 + kTileN);
      const int64_t i0 = (task % m_blocks) * m_per;
      const int64_t i1 = std::min(m, i0 + m_per);
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j) c[i * n + j] = dot_i8(a + i * k, b + j * k, k);
    }
  };
  if (pool != nullptr)
    pool->parallel_for(n_tiles * m_blocks, 1, body);
  else
    body(0, n_tiles * m_blocks);
}

}  // namespace ork::ops
