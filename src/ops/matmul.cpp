#include "ops/matmul.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "ops/vec.h"

namespace ork::ops {
namespace {

// Bytes of decoded f32 W rows per tile: small enough to stay in L2 while every X row passes over it.
constexpr int64_t kTileBytes = 64 * 1024;
// X rows per task when M is split across threads.
constexpr int64_t kRowBlock = 16;

// W rows per tile: a multiple of 4 (the dot4 micro-kernel), between 4 and 64; depends only on K.
int64_t tile_rows(int64_t k) {
  const int64_t rows = kTileBytes / (int64_t(sizeof(float)) * std::max<int64_t>(k, 1));
  return std::clamp<int64_t>(rows / 4 * 4, 4, 64);
}

// y[i][j0 .. j0+nt) for i in [i0, i1) from nt decoded W rows (row stride k) starting at `wt`.
void tile_kernel(const float* x, int64_t i0, int64_t i1, int64_t k, const float* wt, int64_t nt,
                 int64_t j0, int64_t n, float* y) {
  for (int64_t i = i0; i < i1; ++i) {
    const float* xi = x + i * k;
    float* yi = y + i * n + j0;
    int64_t r = 0;
    for (; r + 4 <= nt; r += 4) {
      const float* w0 = wt + r * k;
      vec::dot4(xi, w0, w0 + k, w0 + 2 * k, w0 + 3 * k, k, yi + r);
    }
    for (; r < nt; ++r) yi[r] = vec::dot(xi, wt + r * k, k);
  }
}

}  // namespace

void matmul(ThreadPool& pool, const float* x, int64_t m, int64_t k, const void* w, quant::Type wtype,
            int64_t n, float* y) {
  ORK_CHECK(m >= 0 && k >= 0 && n >= 0, "ops::matmul: negative shape M=", m, " K=", k, " N=", n);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(y, y + m * n, 0.0f);
    return;
  }
  const quant::TypeTraits& tt = quant::traits(wtype);
  ORK_CHECK(k % tt.block_size == 0, "ops::matmul: K=", k, " is not a multiple of the ", tt.name,
            " block size ", tt.block_size);
  const int64_t wrow_bytes = quant::row_bytes(wtype, k);
  // f32 rows are read in place when aligned for float; otherwise they go through decode like the rest.
  const bool is_f32 = wtype == quant::Type::F32 &&
                      reinterpret_cast<uintptr_t>(w) % alignof(float) == 0;
  const auto* wbytes = static_cast<const uint8_t*>(w);

  const int64_t nt = tile_rows(k);
  const int64_t n_tiles = (n + nt - 1) / nt;
  // Split M too when the tiles alone cannot keep every thread busy (prefill on a small matrix).
  // This changes which thread computes an output, never how it is computed.
  int64_t m_blocks = 1;
  if (n_tiles < 4 * int64_t(pool.size()) && m > kRowBlock)
    m_blocks = std::min<int64_t>((m + kRowBlock - 1) / kRowBlock,
                                 (4 * int64_t(pool.size()) + n_tiles - 1) / n_tiles);
  const int64_t m_per = (m + m_blocks - 1) / m_blocks;

  pool.parallel_for(n_tiles * m_blocks, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scratch;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t tile = task / m_blocks;
      const int64_t mb = task % m_blocks;
      const int64_t j0 = tile * nt;
      const int64_t rows = std::min(nt, n - j0);
      const int64_t i0 = mb * m_per;
      const int64_t i1 = std::min(m, i0 + m_per);
      if (i0 >= i1) continue;
      const float* wt;
      if (is_f32) {
        wt = reinterpret_cast<const float*>(wbytes + j0 * wrow_bytes);
      } else {
        if (scratch.size() < size_t(nt * k)) scratch.resize(size_t(nt * k));
        for (int64_t r = 0; r < rows; ++r)
          tt.decode(wbytes + (j0 + r) * wrow_bytes, scratch.data() + r * k, k);
        wt = scratch.data();
      }
      tile_kernel(x, i0, i1, k, wt, rows, j0, n, y);
    }
  });
}

}  // namespace ork::ops
