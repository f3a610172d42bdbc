#include "ops/matmul.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "ops/qkernels.h"
#include "ops/vec.h"

namespace ork::ops {
namespace {

// Bytes of decoded f32 W rows per tile: small enough to stay in L2 while every X row passes over it.
constexpr int64_t kTileBytes = 64 * 1024;

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

// Fast path: W rows per task tile (a multiple of kTileW; small enough that a decode step has
// several tiles per thread even for a 1024-row matrix).
constexpr int64_t kFastTileRows = 16;

struct FastKernel {
  TileFn fn = nullptr;
  ActFormat act = ActFormat::kF32;
};

FastKernel fast_kernel(quant::Type type, const QKernels& kt) {
  switch (type) {
    case quant::Type::Q8_0: return {kt.q8_0, ActFormat::kQ8A};
    case quant::Type::Q4_0: return {kt.q4_0, ActFormat::kQ8A};
    case quant::Type::Q4_K: return {kt.q4_k, ActFormat::kQ8K};
    case quant::Type::Q6_K: return {kt.q6_k, ActFormat::kQ8K};
    case quant::Type::F16: return {kt.f16, ActFormat::kF32};
    default: return {};
  }
}

void matmul_fast(ThreadPool& pool, const float* x, int64_t m, int64_t k, const uint8_t* w,
                 quant::Type wtype, int64_t n, float* y, const FastKernel& fk) {
  const int64_t bs = quant::traits(wtype).block_size;
  const int64_t nb = k / bs;
  const int64_t wrow = quant::row_bytes(wtype, k);
  const int64_t ab = act_row_bytes(fk.act, k);
  const uint8_t* act = quantize_activations(pool, fk.act, x, m, k);

  const int64_t nt = kFastTileRows;
  const int64_t n_tiles = (n + nt - 1) / nt;
  const RowSplit rs = split_rows(m, n_tiles, pool.size(), 4);
  const int64_t m_blocks = rs.blocks, m_per = rs.per;

  pool.parallel_for(n_tiles * m_blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t j0 = (task / m_blocks) * nt;
      const int64_t j1 = std::min(n, j0 + nt);
      const int64_t i0 = (task % m_blocks) * m_per;
      const int64_t i1 = std::min(m, i0 + m_per);
      // A group of kTileW W rows stays in L1 while the X rows stream past it.
      for (int64_t j = j0; j < j1; j += kTileW) {
        const int nw = int(std::min<int64_t>(kTileW, j1 - j));
        for (int64_t i = i0; i < i1; i += kTileX) {
          const int nx = int(std::min<int64_t>(kTileX, i1 - i));
          fk.fn(nb, w + j * wrow, wrow, nw, act + i * ab, ab, nx, y + i * n + j, n);
        }
      }
    }
  });
}

// Checks the shape shared by both matmul paths; handles the empty cases (K = 0 → Y = 0). Returns
// false when there is nothing left to compute.
bool check_shape(int64_t m, int64_t k, int64_t n, quant::Type wtype, float* y) {
  ORK_CHECK(m >= 0 && k >= 0 && n >= 0, "ops::matmul: negative shape M=", m, " K=", k, " N=", n);
  if (m == 0 || n == 0) return false;
  if (k == 0) {
    std::fill(y, y + m * n, 0.0f);
    return false;
  }
  const quant::TypeTraits& tt = quant::traits(wtype);
  ORK_CHECK(k % tt.block_size == 0, "ops::matmul: K=", k, " is not a multiple of the ", tt.name,
            " block size ", tt.block_size);
  return true;
}

}  // namespace

bool has_fast_path(quant::Type type) {
  return fast_kernel(type, qkernels(Isa::kScalar)).fn != nullptr;
}

void matmul(ThreadPool& pool, const float* x, int64_t m, int64_t k, const void* w, quant::Type wtype,
            int64_t n, float* y, MatmulMode mode, Isa isa) {
  if (mode == MatmulMode::kFast && has_fast_path(wtype)) {
    if (!check_shape(m, k, n, wtype, y)) return;
    matmul_fast(pool, x, m, k, static_cast<const uint8_t*>(w), wtype, n, y,
                fast_kernel(wtype, qkernels(isa)));
    return;
  }
  matmul(pool, x, m, k, w, wtype, n, y);
}

void matmul(ThreadPool& pool, const float* x, int64_t m, int64_t k, const void* w, quant::Type wtype,
            int64_t n, float* y) {
  if (!check_shape(m, k, n, wtype, y)) return;
  const quant::TypeTraits& tt = quant::traits(wtype);
  const int64_t wrow_bytes = quant::row_bytes(wtype, k);
  // f32 rows are read in place when aligned for float; otherwise they go through decode like the rest.
  const bool is_f32 = wtype == quant::Type::F32 &&
                      reinterpret_cast<uintptr_t>(w) % alignof(float) == 0;
  const auto* wbytes = static_cast<const uint8_t*>(w);

  const int64_t nt = tile_rows(k);
  const int64_t n_tiles = (n + nt - 1) / nt;
  const RowSplit rs = split_rows(m, n_tiles, pool.size(), 4);
  const int64_t m_blocks = rs.blocks, m_per = rs.per;

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
