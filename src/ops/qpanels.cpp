#include "ops/qpanels.h"

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

// The weight of element e (0..31) of block-panel `q` (one block's quants in a panel), row r.
inline int32_t weight_q8_0(const uint8_t* q, int r, int e) {
  return int8_t(q[(e / 4) * kPanelGroupBytes + r * 4 + e % 4] ^ 0x80);
}
inline int32_t weight_q4_0(const uint8_t* q, int r, int e) {
  const uint8_t byte = q[((e % 16) / 4) * kPanelGroupBytes + r * 4 + e % 4];
  return int32_t(e < 16 ? byte & 15 : byte >> 4) - 8;
}

// The reference kernels: the numerics of qpanels.h written out per output.
template <int32_t (*Weight)(const uint8_t*, int, int), int64_t BlockBytes>
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
        const uint8_t* q = panel + scale_bytes + b * BlockBytes;
        int32_t p = 0;
        for (int e = 0; e < quant::kQK; ++e) p += Weight(q, r, e) * xb[b].qs[e];
        acc = std::fma(f16_to_f32(dh) * xb[b].d, float(p), acc);
      }
      y[i * ys + c] = acc;
    }
  }
}

constexpr int64_t kQ8BlockBytes = 8 * kPanelGroupBytes;  // 512: 32 bytes × 16 rows
constexpr int64_t kQ4BlockBytes = 4 * kPanelGroupBytes;  // 256: 16 bytes × 16 rows

const PanelKernels kScalar = {tile_scalar<weight_q8_0, kQ8BlockBytes>,
                              tile_scalar<weight_q4_0, kQ4BlockBytes>};

// GGUF block geometry: bytes per block, bytes of quants after the fp16 scale.
struct GgufBlock {
  int64_t bytes, quant_bytes;
};
GgufBlock gguf_block(quant::Type t) {
  return t == quant::Type::Q8_0 ? GgufBlock{int64_t(sizeof(quant::BlockQ8_0)), 32}
                                : GgufBlock{int64_t(sizeof(quant::BlockQ4_0)), 16};
}

// Panel byte (group g, row r, byte e) <-> GGUF quant byte 4g+e (both types); Q8_0 flips the sign bit.
inline uint8_t to_panel(quant::Type t, uint8_t b) { return t == quant::Type::Q8_0 ? b ^ 0x80 : b; }

}  // namespace

void QPanels::Free::operator()(uint8_t* p) const { std::free(p); }

bool QPanels::supports(quant::Type type) {
  return type == quant::Type::Q8_0 || type == quant::Type::Q4_0;
}

QPanels QPanels::pack(quant::Type type, const void* data, int64_t n, int64_t k, ThreadPool* pool) {
  ORK_CHECK(supports(type), "ops::QPanels: no panel layout for ", quant::traits(type).name);
  ORK_CHECK(n > 0 && k > 0 && k % quant::kQK == 0, "ops::QPanels: shape N=", n, " K=", k,
            " is not N > 0 rows of a positive multiple of 32");
  QPanels out;
  out.type_ = type;
  out.n_ = n;
  out.k_ = k;
  const GgufBlock gb = gguf_block(type);
  const int64_t nb = k / quant::kQK;
  out.block_bytes_ = gb.quant_bytes * kPanelRows;
  out.scale_bytes_ = int64_t(align_up(uint64_t(nb * kPanelRows * 2), 64));
  out.panel_bytes_ = out.scale_bytes_ + nb * out.block_bytes_;
  const uint64_t total = checked_mul(uint64_t(out.panels()), uint64_t(out.panel_bytes_), "QPanels size");
  auto* mem = static_cast<uint8_t*>(std::aligned_alloc(64, size_t(align_up(total, 64))));
  ORK_CHECK(mem != nullptr, "ops::QPanels: cannot allocate ", total, " bytes");
  out.data_.reset(mem);

  const auto* src = static_cast<const uint8_t*>(data);
  const int64_t row_bytes = nb * gb.bytes;
  // Padding rows: scale 0 and weights 0 (0x80 for Q8_0, nibbles 8 for Q4_0).
  const uint8_t zero_weight = type == quant::Type::Q8_0 ? 0x80 : 0x88;
  const auto pack_panels = [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      uint8_t* panel = mem + p * out.panel_bytes_;
      std::memset(panel, 0, size_t(out.scale_bytes_));
      std::memset(panel + out.scale_bytes_, zero_weight, size_t(out.panel_bytes_ - out.scale_bytes_));
      for (int r = 0; r < kPanelRows && p * kPanelRows + r < n; ++r) {
        const uint8_t* row = src + (p * kPanelRows + r) * row_bytes;
        for (int64_t b = 0; b < nb; ++b) {
          const uint8_t* blk = row + b * gb.bytes;
          std::memcpy(panel + (b * kPanelRows + r) * 2, blk, 2);
          uint8_t* q = panel + out.scale_bytes_ + b * out.block_bytes_ + r * 4;
          for (int j = 0; j < gb.quant_bytes; ++j)
            q[(j / 4) * kPanelGroupBytes + j % 4] = to_panel(type, blk[2 + j]);
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

void QPanels::unpack(void* data) const {
  auto* dst = static_cast<uint8_t*>(data);
  const GgufBlock gb = gguf_block(type_);
  const int64_t nb = blocks();
  for (int64_t j = 0; j < n_; ++j) {
    const uint8_t* p = panel(j / kPanelRows);
    const int64_t r = j % kPanelRows;
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* blk = dst + (j * nb + b) * gb.bytes;
      std::memcpy(blk, p + (b * kPanelRows + r) * 2, 2);
      const uint8_t* q = p + scale_bytes_ + b * block_bytes_ + r * 4;
      for (int i = 0; i < gb.quant_bytes; ++i)
        blk[2 + i] = to_panel(type_, q[(i / 4) * kPanelGroupBytes + i % 4]);
    }
  }
}

const PanelKernels* panel_kernels_scalar() { return &kScalar; }

PanelTileFn panel_kernel(quant::Type type, Isa isa) {
  if (!isa_supported(isa)) return nullptr;
  const PanelKernels* k = nullptr;
  switch (isa) {
    case Isa::kScalar: k = panel_kernels_scalar(); break;
    case Isa::kAvx512Vnni: k = panel_kernels_avx512vnni(); break;
    case Isa::kNeonDot: k = panel_kernels_neon(); break;
    case Isa::kAvx2: break;  // no u8×s8 dot without int16 saturation: the GGUF-layout kernels
  }
  if (k == nullptr) return nullptr;
  switch (type) {
    case quant::Type::Q8_0: return k->q8_0;
    case quant::Type::Q4_0: return k->q4_0;
    default: return nullptr;
  }
}

void matmul_qpanels(ThreadPool& pool, const float* x, int64_t m, const QPanels& w, float* y,
                    Isa isa) {
  const PanelTileFn fn = panel_kernel(w.type(), isa);
  ORK_CHECK(fn != nullptr, "ops::matmul_qpanels: no ", quant::traits(w.type()).name,
            " panel kernel for ISA '", isa_name(isa), "'");
  ORK_CHECK(m >= 0, "ops::matmul_qpanels: negative M=", m);
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
