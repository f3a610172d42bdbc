#include "ops/q8_panels.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/checked.h"
#include "core/error.h"
#include "core/fp16.h"
#include "quant/blocks.h"

namespace ork::ops {
namespace {

constexpr int64_t kQ8Block = int64_t(sizeof(quant::BlockQ8_0));  // 34 bytes: fp16 d, 32 × int8

// The reference kernel: the numerics of q8_panels.h written out per output.
void tile_scalar(int64_t nb, const uint8_t* panels, int64_t panel_bytes, int64_t scale_bytes,
                 int np, int ncol, const uint8_t* x, int64_t xs, int nx, float* y, int64_t ys) {
  for (int i = 0; i < nx; ++i) {
    const auto* xb = reinterpret_cast<const BlockQ8A*>(x + i * xs);
    for (int c = 0; c < np * kPanelRows && c < ncol; ++c) {
      const uint8_t* panel = panels + (c / kPanelRows) * panel_bytes;
      const int r = c % kPanelRows;
      float acc = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        uint16_t dh;
        std::memcpy(&dh, panel + (b * kPanelRows + r) * 2, 2);
        const uint8_t* u = panel + scale_bytes + b * 8 * kPanelGroupBytes;
        int32_t p = 0;
        for (int e = 0; e < quant::kQK; ++e) {
          const int8_t w = int8_t(u[(e / 4) * kPanelGroupBytes + r * 4 + e % 4] ^ 0x80);
          p += int32_t(w) * xb[b].qs[e];
        }
        acc = std::fma(f16_to_f32(dh) * xb[b].d, float(p), acc);
      }
      y[i * ys + c] = acc;
    }
  }
}

}  // namespace

void Q8Panels::Free::operator()(uint8_t* p) const { std::free(p); }

Q8Panels Q8Panels::pack(const void* q8_0, int64_t n, int64_t k, ThreadPool* pool) {
  ORK_CHECK(n > 0 && k > 0 && k % quant::kQK == 0, "ops::Q8Panels: shape N=", n, " K=", k,
            " is not N > 0 rows of a positive multiple of 32");
  Q8Panels out;
  out.n_ = n;
  out.k_ = k;
  const int64_t nb = k / quant::kQK;
  out.scale_bytes_ = int64_t(align_up(uint64_t(nb * kPanelRows * 2), 64));
  out.panel_bytes_ = out.scale_bytes_ + nb * 8 * kPanelGroupBytes;
  const uint64_t total = checked_mul(uint64_t(out.panels()), uint64_t(out.panel_bytes_), "Q8Panels size");
  auto* mem = static_cast<uint8_t*>(std::aligned_alloc(64, size_t(align_up(total, 64))));
  ORK_CHECK(mem != nullptr, "ops::Q8Panels: cannot allocate ", total, " bytes");
  out.data_.reset(mem);

  const auto* src = static_cast<const uint8_t*>(q8_0);
  const int64_t row_bytes = nb * kQ8Block;
  const auto pack_panels = [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      uint8_t* panel = mem + p * out.panel_bytes_;
      std::memset(panel, 0, size_t(out.scale_bytes_));
      std::memset(panel + out.scale_bytes_, 0x80, size_t(out.panel_bytes_ - out.scale_bytes_));
      for (int r = 0; r < kPanelRows && p * kPanelRows + r < n; ++r) {
        const uint8_t* row = src + (p * kPanelRows + r) * row_bytes;
        for (int64_t b = 0; b < nb; ++b) {
          const uint8_t* blk = row + b * kQ8Block;
          std::memcpy(panel + (b * kPanelRows + r) * 2, blk, 2);
          uint8_t* u = panel + out.scale_bytes_ + b * 8 * kPanelGroupBytes + r * 4;
          for (int g = 0; g < 8; ++g)
            for (int e = 0; e < 4; ++e) u[g * kPanelGroupBytes + e] = blk[2 + 4 * g + e] ^ 0x80;
        }
      }
    }
  };
  if (pool != nullptr)
    pool->parallel_for(out.panels(), 4, pack_panels);
  else
    pack_panels(0, out.panels());
  return out;
}

void Q8Panels::unpack(void* q8_0) const {
  auto* dst = static_cast<uint8_t*>(q8_0);
  const int64_t nb = blocks();
  for (int64_t j = 0; j < n_; ++j) {
    const uint8_t* p = panel(j / kPanelRows);
    const int64_t r = j % kPanelRows;
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* blk = dst + (j * nb + b) * kQ8Block;
      std::memcpy(blk, p + (b * kPanelRows + r) * 2, 2);
      const uint8_t* u = p + scale_bytes_ + b * 8 * kPanelGroupBytes + r * 4;
      for (int g = 0; g < 8; ++g)
        for (int e = 0; e < 4; ++e) blk[2 + 4 * g + e] = u[g * kPanelGroupBytes + e] ^ 0x80;
    }
  }
}

PanelTileFn q8_panel_kernel_scalar() { return tile_scalar; }

PanelTileFn q8_panel_kernel(Isa isa) {
  if (!isa_supported(isa)) return nullptr;
  switch (isa) {
    case Isa::kScalar: return q8_panel_kernel_scalar();
    case Isa::kAvx512Vnni: return q8_panel_kernel_avx512vnni();
    case Isa::kNeonDot: return q8_panel_kernel_neon();
    case Isa::kAvx2: return nullptr;  // no u8×s8 dot without saturation: the GGUF-layout kernels
  }
  return nullptr;
}

void matmul_q8_panels(ThreadPool& pool, const float* x, int64_t m, const Q8Panels& w, float* y,
                      Isa isa) {
  const PanelTileFn fn = q8_panel_kernel(isa);
  ORK_CHECK(fn != nullptr, "ops::matmul_q8_panels: no panel kernel for ISA '", isa_name(isa), "'");
  ORK_CHECK(m >= 0, "ops::matmul_q8_panels: negative M=", m);
  if (m == 0) return;
  const int64_t k = w.k(), n = w.n(), nb = w.blocks();
  const int64_t xs = nb * int64_t(sizeof(BlockQ8A));

  thread_local std::vector<uint8_t> act_buf;
  if (act_buf.size() < size_t(m * xs)) act_buf.resize(size_t(m * xs));
  uint8_t* act = act_buf.data();
  const auto quantize = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      quantize_row_q8a(x + r * k, k, reinterpret_cast<BlockQ8A*>(act + r * xs));
  };
  if (m >= 8)
    pool.parallel_for(m, 4, quantize);
  else
    quantize(0, m);

  // Tasks: tiles of kPanelTileMax panels × blocks of X rows (X rows split only when the column
  // tiles alone cannot keep every thread busy, as in prefill on a small matrix).
  constexpr int64_t kRowBlock = 16;
  const int64_t n_tiles = (w.panels() + kPanelTileMax - 1) / kPanelTileMax;
  int64_t m_blocks = 1;
  if (n_tiles < 8 * int64_t(pool.size()) && m > kRowBlock)
    m_blocks = std::min<int64_t>((m + kRowBlock - 1) / kRowBlock,
                                 (8 * int64_t(pool.size()) + n_tiles - 1) / n_tiles);
  const int64_t m_per = (m + m_blocks - 1) / m_blocks;
  // Decode: one chunk per few tiles keeps the claim counter cheap; prefill tasks are large anyway.
  pool.parallel_for(n_tiles * m_blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t p0 = (task / m_blocks) * kPanelTileMax;
      const int np = int(std::min<int64_t>(kPanelTileMax, w.panels() - p0));
      const int ncol = int(std::min<int64_t>(np * kPanelRows, n - p0 * kPanelRows));
      const int64_t i0 = (task % m_blocks) * m_per;
      const int64_t i1 = std::min(m, i0 + m_per);
      for (int64_t i = i0; i < i1; i += kPanelTileX) {
        const int nx = int(std::min<int64_t>(kPanelTileX, i1 - i));
        fn(nb, w.panel(p0), w.panel_bytes(), w.scale_bytes(), np, ncol, act + i * xs, xs, nx,
           y + i * n + p0 * kPanelRows, n);
      }
    }
  });
}

}  // namespace ork::ops
