#include "ops/qpanels.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/checked.h"
#include "core/error.h"
#include "core/fp16.h"
#include "core/part_claims.h"
#include "ops/qpanels_two_tiles.h"
#include "quant/blocks.h"

namespace ork::ops {
namespace {

// ---- The reference kernels: the numerics of qpanels.h written out per output. ----

// The weight of element e (0..31) of a Q8_0 / Q4_0 block's quants in a panel, row r.
inline int32_t weight_q8_0(const uint8_t* q, int r, int e) {
  return int8_t(q[(e / 4) * kPanelGroupBytes + r * 4 + e % 4] ^ 0x80);
}
inline int32_t weight_q4_0(const uint8_t* q, int r, int e) {
  const uint8_t byte = q[((e % 16) / 4) * kPanelGroupBytes + r * 4 + e % 4];
  return int32_t(e < 16 ? byte & 15 : byte >> 4) - 8;
}
inline int32_t weight_iq4_nl(const uint8_t* q, int r, int e) {
  const uint8_t byte = q[((e % 16) / 4) * kPanelGroupBytes + r * 4 + e % 4];
  return quant::kIQ4NLValues[e < 16 ? byte & 15 : byte >> 4];
}

// Q4_1 / Q5_0 / Q5_1: the unsigned value q (0..15 or 0..31) of element e. The Q5 types' 5th bits
// are in the group after the 4 nibble groups, byte e % 4 of the row, bit (e % 16) / 4 + 4·(e / 16).
inline int32_t quant_q4_1(const uint8_t* q, int r, int e) {
  const uint8_t byte = q[((e % 16) / 4) * kPanelGroupBytes + r * 4 + e % 4];
  return e < 16 ? byte & 15 : byte >> 4;
}
inline int32_t quant_q5(const uint8_t* q, int r, int e) {
  const uint8_t h = q[4 * kPanelGroupBytes + r * 4 + e % 4];
  return quant_q4_1(q, r, e) | (((h >> ((e % 16) / 4 + 4 * (e / 16))) & 1) << 4);
}
inline int32_t weight_q5_0(const uint8_t* q, int r, int e) { return quant_q5(q, r, e) - 16; }

// One block of a 32-element type (Q8_0, Q4_0, Q5_0, IQ4_NL): row r's scales d[16] at s and quants
// at q against the activation block xb, added to acc.
template <int32_t (*Weight)(const uint8_t*, int, int)>
float block_32(float acc, const uint8_t* s, const uint8_t* q, int r, const BlockQ8A& xb) {
  uint16_t dh;
  std::memcpy(&dh, s + 2 * r, 2);
  int32_t p = 0;
  for (int e = 0; e < quant::kQK; ++e) p += Weight(q, r, e) * xb.qs[e];
  return std::fma(f16_to_f32(dh) * xb.d, float(p), acc);
}
// One output of a 32-element panel: row r of `panel` against activation row x (nb blocks).
template <int32_t (*Weight)(const uint8_t*, int, int), int64_t QuantBytes>
float output_32(int64_t nb, const uint8_t* panel, int64_t scale_bytes, int r, const BlockQ8A* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b)
    acc = block_32<Weight>(acc, panel + b * kPanelRows * 2, panel + scale_bytes + b * QuantBytes, r, x[b]);
  return acc;
}

// Q4_1 / Q5_1: per block p = Σ q·x (exact), acc = fma(d·d_x, f32(p), acc), then
// acc = fma(m·d_x, f32(Σx), acc). The scale region holds d[16] then m[16] per block.
template <int32_t (*Quant)(const uint8_t*, int, int), int64_t QuantBytes>
float output_offset_32(int64_t nb, const uint8_t* panel, int64_t scale_bytes, int r, const BlockQ8A* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    uint16_t dh, mh;
    std::memcpy(&dh, panel + b * 4 * kPanelRows + 2 * r, 2);
    std::memcpy(&mh, panel + b * 4 * kPanelRows + 2 * kPanelRows + 2 * r, 2);
    const uint8_t* q = panel + scale_bytes + b * QuantBytes;
    int32_t p = 0;
    for (int e = 0; e < quant::kQK; ++e) p += Quant(q, r, e) * x[b].qs[e];
    acc = std::fma(f16_to_f32(dh) * x[b].d, float(p), acc);
    acc = std::fma(f16_to_f32(mh) * x[b].d, float(x[b].sum), acc);
  }
  return acc;
}

// Q4_K: per super-block, isum = Σ_s sc_s·Σ_{e∈s} q·x and msum = Σ_s m_s·Σ_{e∈s} x (exact int32),
// then acc = fma(d·d_x, f32(isum), acc); acc = fma(−(dmin·d_x), f32(msum), acc).
float output_q4_k(int64_t nb, const uint8_t* panel, int64_t scale_bytes, int r, const quant::BlockQ8_K* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* s = panel + b * kPanelQ4KScaleBytes;
    const uint8_t* q = panel + scale_bytes + b * kPanelQ4KQuantBytes;
    uint16_t dh, mh;
    std::memcpy(&dh, s + 2 * r, 2);
    std::memcpy(&mh, s + 32 + 2 * r, 2);
    int32_t isum = 0, msum = 0;
    for (int sb = 0; sb < 8; ++sb) {
      int32_t p = 0;
      for (int e = 0; e < 32; ++e) {
        const uint8_t byte = q[((sb / 2) * 8 + e / 4) * kPanelGroupBytes + r * 4 + e % 4];
        p += int32_t(sb % 2 ? byte >> 4 : byte & 15) * x[b].qs[32 * sb + e];
      }
      isum += int32_t(s[64 + 16 * sb + r]) * p;
      msum += int32_t(s[192 + 16 * sb + r]) * (x[b].bsums[2 * sb] + x[b].bsums[2 * sb + 1]);
    }
    acc = std::fma(f16_to_f32(dh) * x[b].d, float(isum), acc);
    acc = std::fma(-(f16_to_f32(mh) * x[b].d), float(msum), acc);
  }
  return acc;
}

// Q5_K: as Q4_K with the 5th bit of element 32·sb + e in bit sb of qh group e / 4.
float output_q5_k(int64_t nb, const uint8_t* panel, int64_t scale_bytes, int r, const quant::BlockQ8_K* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* s = panel + b * kPanelQ4KScaleBytes;
    const uint8_t* q = panel + scale_bytes + b * kPanelQ5KQuantBytes;
    uint16_t dh, mh;
    std::memcpy(&dh, s + 2 * r, 2);
    std::memcpy(&mh, s + 32 + 2 * r, 2);
    int32_t isum = 0, msum = 0;
    for (int sb = 0; sb < 8; ++sb) {
      int32_t p = 0;
      for (int e = 0; e < 32; ++e) {
        const uint8_t byte = q[((sb / 2) * 8 + e / 4) * kPanelGroupBytes + r * 4 + e % 4];
        const uint8_t hbyte = q[(32 + e / 4) * kPanelGroupBytes + r * 4 + e % 4];
        const int32_t w = int32_t(sb % 2 ? byte >> 4 : byte & 15) | (((hbyte >> sb) & 1) << 4);
        p += w * x[b].qs[32 * sb + e];
      }
      isum += int32_t(s[64 + 16 * sb + r]) * p;
      msum += int32_t(s[192 + 16 * sb + r]) * (x[b].bsums[2 * sb] + x[b].bsums[2 * sb + 1]);
    }
    acc = std::fma(f16_to_f32(dh) * x[b].d, float(isum), acc);
    acc = std::fma(-(f16_to_f32(mh) * x[b].d), float(msum), acc);
  }
  return acc;
}

// Q2_K: per super-block, as Q4_K over 16 sub-blocks of 16: q of element 128h + 32g + l is bits
// 2g, 2g+1 of quant group 8h + l / 4 (byte l % 4); m_s multiplies the 16-value sum bsums[s].
float output_q2_k(int64_t nb, const uint8_t* panel, int64_t scale_bytes, int r, const quant::BlockQ8_K* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* s = panel + b * kPanelQ2KScaleBytes;
    const uint8_t* q = panel + scale_bytes + b * kPanelQ2KQuantBytes;
    uint16_t dh, mh;
    std::memcpy(&dh, s + 2 * r, 2);
    std::memcpy(&mh, s + 32 + 2 * r, 2);
    int32_t isum = 0, msum = 0;
    for (int sb = 0; sb < 16; ++sb) {
      int32_t p = 0;
      for (int e = 16 * sb; e < 16 * sb + 16; ++e) {
        const int h = e / 128, g = (e % 128) / 32, l = e % 32;
        const uint8_t byte = q[(8 * h + l / 4) * kPanelGroupBytes + r * 4 + l % 4];
        p += int32_t((byte >> (2 * g)) & 3) * x[b].qs[e];
      }
      isum += int32_t(s[64 + 16 * sb + r]) * p;
      msum += int32_t(s[320 + 16 * sb + r]) * x[b].bsums[sb];
    }
    acc = std::fma(f16_to_f32(dh) * x[b].d, float(isum), acc);
    acc = std::fma(-(f16_to_f32(mh) * x[b].d), float(msum), acc);
  }
  return acc;
}

// Q3_K: q (0..7) of element e of row r: Q2_K's low bits, the high bit from h group (e % 32) / 4.
inline int32_t q3_k_quant(const uint8_t* q, int r, int e) {
  const int h = e / 128, g = (e % 128) / 32, l = e % 32;
  const uint8_t lo = q[(8 * h + l / 4) * kPanelGroupBytes + r * 4 + l % 4];
  const uint8_t hi = q[(16 + l / 4) * kPanelGroupBytes + r * 4 + l % 4];
  return int32_t(((lo >> (2 * g)) & 3) | (((hi >> (4 * h + g)) & 1) << 2));
}

// IQ4_XS: per super-block t = Σ_s l_s·Σ_{e∈s} grid(q)·x, acc = fma(d·d_x, f32(t), acc).
float output_iq4_xs(int64_t nb, const uint8_t* panel, int64_t scale_bytes, int r, const quant::BlockQ8_K* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* s = panel + b * kPanelIQ4XSScaleBytes;
    const uint8_t* q = panel + scale_bytes + b * kPanelQ4KQuantBytes;
    uint16_t dh;
    std::memcpy(&dh, s + 2 * r, 2);
    int32_t t = 0;
    for (int sb = 0; sb < 8; ++sb) {
      int32_t p = 0;
      for (int e = 0; e < 32; ++e) p += weight_iq4_nl(q + 4 * sb * kPanelGroupBytes, r, e) * x[b].qs[32 * sb + e];
      t += int32_t(int8_t(s[32 + 16 * sb + r])) * p;
    }
    acc = std::fma(f16_to_f32(dh) * x[b].d, float(t), acc);
  }
  return acc;
}

// Q6_K: q (0..63) of element e of row r from the panel's ql / qh groups.
inline int32_t q6_k_quant(const uint8_t* q, int r, int e) {
  const int h = e / 128, k = (e % 128) / 32, l = e % 32;
  const uint8_t lo = q[(16 * h + 8 * (k % 2) + l / 4) * kPanelGroupBytes + r * 4 + l % 4];
  const uint8_t hi = q[(32 + 8 * h + l / 4) * kPanelGroupBytes + r * 4 + l % 4];
  return int32_t((k / 2 ? lo >> 4 : lo & 15) | (((hi >> (2 * k)) & 3) << 4));
}

// Q6_K (Zero 32) and Q3_K (Zero 4), whose scale regions are both d[16] then int8 sc[16][16]: per
// super-block t = Σ_s sc_s·(Σ_{e∈s} q·x − Zero·Σ_{e∈s} x), acc = fma(d·d_x, f32(t), acc).
// One super-block of it: row r's scale entry s and quants q against the activation block xb.
template <int32_t (*Quant)(const uint8_t*, int, int), int32_t Zero>
float signed_16_block(float acc, const uint8_t* s, const uint8_t* q, int r, const quant::BlockQ8_K& xb) {
  uint16_t dh;
  std::memcpy(&dh, s + 2 * r, 2);
  int32_t t = 0;
  for (int sb = 0; sb < 16; ++sb) {
    int32_t p = 0;
    for (int e = 16 * sb; e < 16 * sb + 16; ++e) p += Quant(q, r, e) * xb.qs[e];
    t += int32_t(int8_t(s[32 + 16 * sb + r])) * (p - Zero * xb.bsums[sb]);
  }
  return std::fma(f16_to_f32(dh) * xb.d, float(t), acc);
}
template <int32_t (*Quant)(const uint8_t*, int, int), int64_t QuantBytes, int32_t Zero>
float output_signed_16(int64_t nb, const uint8_t* panel, int64_t scale_bytes, int r, const quant::BlockQ8_K* x) {
  static_assert(kPanelQ6KScaleBytes == kPanelQ3KScaleBytes);
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b)
    acc = signed_16_block<Quant, Zero>(acc, panel + b * kPanelQ6KScaleBytes, panel + scale_bytes + b * QuantBytes,
                                       r, x[b]);
  return acc;
}

// A PanelTileFn from a per-output function: every (activation row, column) of the tile.
template <typename Act, float (*Output)(int64_t, const uint8_t*, int64_t, int, const Act*)>
void tile_scalar(int64_t nb, const uint8_t* panels, int64_t panel_bytes, int64_t scale_bytes, int np,
                 int ncol, const uint8_t* x, int64_t xs, int nx, float* y, int64_t ys) {
  for (int i = 0; i < nx; ++i) {
    const auto* xr = reinterpret_cast<const Act*>(x + i * xs);
    for (int c = 0; c < np * kPanelRows && c < ncol; ++c)
      y[i * ys + c] = Output(nb, panels + (c / kPanelRows) * panel_bytes, scale_bytes, c % kPanelRows, xr);
  }
}

// The paired types (qpanels.h): output_32's and output_signed_16's numerics for row r of panel c of
// the pair.
template <int32_t (*Weight)(const uint8_t*, int, int), const PairLayout* Pairs>
float output_32_pair(int64_t nb, const uint8_t* pair, int c, int r, const BlockQ8A* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b)
    acc = block_32<Weight>(acc, Pairs->scales(pair, b, c), Pairs->quants(pair, b, c), r, x[b]);
  return acc;
}
float output_q6_k_pair(int64_t nb, const uint8_t* pair, int c, int r, const quant::BlockQ8_K* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b)
    acc = signed_16_block<q6_k_quant, 32>(acc, kQ6_KPairs.scales(pair, b, c), kQ6_KPairs.quants(pair, b, c), r, x[b]);
  return acc;
}
// A PanelTileFn of a paired type from its per-output function: the tile's panels are c = 0, 1 of
// the pair at `pair`.
template <typename Act, float (*Output)(int64_t, const uint8_t*, int, int, const Act*)>
void tile_scalar_pair(int64_t nb, const uint8_t* pair, int64_t, int64_t, int np, int ncol, const uint8_t* x,
                      int64_t xs, int nx, float* y, int64_t ys) {
  for (int i = 0; i < nx; ++i) {
    const auto* xr = reinterpret_cast<const Act*>(x + i * xs);
    for (int c = 0; c < np * kPanelRows && c < ncol; ++c)
      y[i * ys + c] = Output(nb, pair, c / kPanelRows, c % kPanelRows, xr);
  }
}

const PanelKernels kScalar = {
    tile_scalar_pair<BlockQ8A, output_32_pair<weight_q8_0, &kQ8_0Pairs>>,
    tile_scalar_pair<BlockQ8A, output_32_pair<weight_q4_0, &kQ4_0Pairs>>,
    tile_scalar<quant::BlockQ8_K, output_q4_k>, tile_scalar_pair<quant::BlockQ8_K, output_q6_k_pair>,
    tile_scalar<quant::BlockQ8_K, output_q5_k>,
    tile_scalar<BlockQ8A, output_32<weight_iq4_nl, 4 * kPanelGroupBytes>>,
    tile_scalar<quant::BlockQ8_K, output_iq4_xs>,
    tile_scalar<BlockQ8A, output_offset_32<quant_q4_1, 4 * kPanelGroupBytes>>,
    tile_scalar<BlockQ8A, output_32<weight_q5_0, 5 * kPanelGroupBytes>>,
    tile_scalar<BlockQ8A, output_offset_32<quant_q5, 5 * kPanelGroupBytes>>,
    tile_scalar<quant::BlockQ8_K, output_q2_k>, 
    tile_scalar<quant::BlockQ8_K, output_signed_16<q3_k_quant, kPanelQ3KQuantBytes, 4>>};

// ---- Layout geometry per type. ----

const PairLayout& pair_layout(quant::Type t) {
  return t == quant::Type::Q6_K ? kQ6_KPairs : t == quant::Type::Q8_0 ? kQ8_0Pairs : kQ4_0Pairs;
}

struct Geometry {
  int64_t block_elems;   // elements per GGUF block
  int64_t gguf_bytes;    // bytes per GGUF block
  int64_t scale_bytes;   // scale-region bytes per block in a panel
  int64_t quant_bytes;   // quant-region bytes per block in a panel
};

Geometry geometry(quant::Type t) {
  switch (t) {
    case quant::Type::Q8_0: return {32, int64_t(sizeof(quant::BlockQ8_0)), 32, 8 * kPanelGroupBytes};
    case quant::Type::Q4_0: return {32, int64_t(sizeof(quant::BlockQ4_0)), 32, 4 * kPanelGroupBytes};
    case quant::Type::Q6_K: return {256, int64_t(sizeof(quant::BlockQ6_K)), kPanelQ6KScaleBytes, kPanelQ6KQuantBytes};
    case quant::Type::Q5_K: return {256, int64_t(sizeof(quant::BlockQ5_K)), kPanelQ4KScaleBytes, kPanelQ5KQuantBytes};
    case quant::Type::IQ4_NL: return {32, int64_t(sizeof(quant::BlockIQ4_NL)), 32, 4 * kPanelGroupBytes};
    case quant::Type::Q2_K: return {256, int64_t(sizeof(quant::BlockQ2_K)), kPanelQ2KScaleBytes, kPanelQ2KQuantBytes};
    case quant::Type::Q3_K: return {256, int64_t(sizeof(quant::BlockQ3_K)), kPanelQ3KScaleBytes, kPanelQ3KQuantBytes};
    case quant::Type::Q4_1: return {32, int64_t(sizeof(quant::BlockQ4_1)), 64, 4 * kPanelGroupBytes};
    case quant::Type::Q5_0: return {32, int64_t(sizeof(quant::BlockQ5_0)), 32, 5 * kPanelGroupBytes};
    case quant::Type::Q5_1: return {32, int64_t(sizeof(quant::BlockQ5_1)), 64, 5 * kPanelGroupBytes};
    case quant::Type::IQ4_XS: return {256, int64_t(sizeof(quant::BlockIQ4_XS)), kPanelIQ4XSScaleBytes, kPanelQ4KQuantBytes};
    default: return {256, int64_t(sizeof(quant::BlockQ4_K)), kPanelQ4KScaleBytes, kPanelQ4KQuantBytes};
  }
}

// Q4_K's 12 scale bytes <-> 8 six-bit scales and 8 six-bit mins (a bijection: 96 bits each way).
void unpack_k_scales(const uint8_t* s, uint8_t* sc, uint8_t* m) {
  for (int j = 0; j < 4; ++j) {
    sc[j] = s[j] & 63;
    m[j] = s[j + 4] & 63;
  }
  for (int j = 4; j < 8; ++j) {
    sc[j] = uint8_t((s[j + 4] & 15) | ((s[j - 4] >> 6) << 4));
    m[j] = uint8_t((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}
void pack_k_scales(const uint8_t* sc, const uint8_t* m, uint8_t* s) {
  for (int j = 0; j < 4; ++j) {
    s[j] = uint8_t(sc[j] | ((sc[j + 4] >> 4) << 6));
    s[j + 4] = uint8_t(m[j] | ((m[j + 4] >> 4) << 6));
    s[j + 8] = uint8_t((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
  }
}

// Moves one GGUF block of row r into / out of its panel (scale region `s`, quant region `q`).
// Quant byte 4g+e of a 32-element block (and byte 32j+4g+e of a Q4_K block) sits at panel offset
// (group)·64 + 4r + e; Q8_0 quants flip their sign bit.
// Copies `groups` 4-byte groups from consecutive GGUF bytes to the panel (group stride 64, row r),
// XOR `flip` on every byte.
inline void scatter_groups(const uint8_t* src, int groups, int r, uint32_t flip, uint8_t* q) {
  for (int g = 0; g < groups; ++g) {
    uint32_t v;
    std::memcpy(&v, src + 4 * g, 4);
    v ^= flip;
    std::memcpy(q + g * kPanelGroupBytes + r * 4, &v, 4);
  }
}

// The Q5_0 / Q5_1 5th bits: bit j of the GGUF little-endian uint32 qh is element j; the panel keeps
// them as 4 bytes per row, byte j % 4 bit (j % 16) / 4 + 4·(j / 16), so that the nibble group g
// (elements 4g+e and 16+4g+e, e < 4) finds its bits at positions g and 4 + g of byte e.
inline void spread_qh(const uint8_t* qh, uint8_t* out) {
  uint32_t v;
  std::memcpy(&v, qh, 4);
  std::memset(out, 0, 4);
  for (int j = 0; j < 32; ++j)
    out[j % 4] = uint8_t(out[j % 4] | ((v >> j) & 1) << ((j % 16) / 4 + 4 * (j / 16)));
}
inline void gather_qh(const uint8_t* in, uint8_t* qh) {
  uint32_t v = 0;
  for (int j = 0; j < 32; ++j) v |= uint32_t((in[j % 4] >> ((j % 16) / 4 + 4 * (j / 16))) & 1) << j;
  std::memcpy(qh, &v, 4);
}

void put_block(quant::Type t, const uint8_t* blk, int r, uint8_t* s, uint8_t* q) {
  if (t == quant::Type::Q3_K) {  // BlockQ3_K: hmask[32], qs[64], scales[12], d
    std::memcpy(s + 2 * r, blk + 108, 2);
    int sc[16];
    quant::unpack_q3_K_scales(blk + 96, sc);
    for (int j = 0; j < 16; ++j) s[32 + 16 * j + r] = uint8_t(int8_t(sc[j] - 32));
    scatter_groups(blk + 32, 16, r, 0, q);
    scatter_groups(blk, 8, r, 0, q + 16 * kPanelGroupBytes);
    return;
  }
  if (t == quant::Type::Q2_K) {  // BlockQ2_K: scales[16], qs[64], d, dmin
    std::memcpy(s + 2 * r, blk + 80, 2);
    std::memcpy(s + 32 + 2 * r, blk + 82, 2);
    for (int j = 0; j < 16; ++j) {
      s[64 + 16 * j + r] = blk[j] & 15;
      s[320 + 16 * j + r] = blk[j] >> 4;
    }
    scatter_groups(blk + 16, 16, r, 0, q);
    return;
  }
  if (t == quant::Type::Q4_1 || t == quant::Type::Q5_0 || t == quant::Type::Q5_1) {
    const bool offset = t != quant::Type::Q5_0;  // d, m (Q4_1, Q5_1) or d (Q5_0) first
    std::memcpy(s + 2 * r, blk, 2);
    if (offset) std::memcpy(s + 2 * kPanelRows + 2 * r, blk + 2, 2);
    const uint8_t* qh = blk + (offset ? 4 : 2);
    if (t == quant::Type::Q4_1) {
      scatter_groups(blk + 4, 4, r, 0, q);
    } else {
      scatter_groups(qh + 4, 4, r, 0, q);
      spread_qh(qh, q + 4 * kPanelGroupBytes + r * 4);
    }
    return;
  }
  if (t == quant::Type::IQ4_XS) {  // BlockIQ4_XS: d, scales_h, scales_l[4], qs[128]
    std::memcpy(s + 2 * r, blk, 2);
    const int scales_h = blk[2] | blk[3] << 8;
    for (int j = 0; j < 8; ++j) {
      const int ls = ((blk[4 + j / 2] >> (4 * (j % 2))) & 15) | (((scales_h >> (2 * j)) & 3) << 4);
      s[32 + 16 * j + r] = uint8_t(int8_t(ls - 32));
    }
    scatter_groups(blk + 8, 32, r, 0, q);
    return;
  }
  if (t == quant::Type::Q6_K) {  // BlockQ6_K: ql[128], qh[64], scales[16], d
    std::memcpy(s + 2 * r, blk + 208, 2);
    for (int j = 0; j < 16; ++j) s[32 + 16 * j + r] = blk[192 + j];
    scatter_groups(blk, 48, r, 0, q);
    return;
  }
  if (t == quant::Type::Q4_K || t == quant::Type::Q5_K) {
    std::memcpy(s + 2 * r, blk, 2);        // d
    std::memcpy(s + 32 + 2 * r, blk + 2, 2);  // dmin
    uint8_t sc[8], m[8];
    unpack_k_scales(blk + 4, sc, m);
    for (int j = 0; j < 8; ++j) {
      s[64 + 16 * j + r] = sc[j];
      s[192 + 16 * j + r] = m[j];
    }
    if (t == quant::Type::Q4_K) {
      scatter_groups(blk + 16, 32, r, 0, q);
    } else {  // BlockQ5_K: d, dmin, scales[12], qh[32], qs[128]
      scatter_groups(blk + 48, 32, r, 0, q);
      scatter_groups(blk + 16, 8, r, 0, q + 32 * kPanelGroupBytes);
    }
    return;
  }
  std::memcpy(s + 2 * r, blk, 2);
  if (t == quant::Type::Q8_0)
    scatter_groups(blk + 2, 8, r, 0x80808080u, q);
  else
    scatter_groups(blk + 2, 4, r, 0, q);
}

void get_block(quant::Type t, const uint8_t* s, const uint8_t* q, int r, uint8_t* blk) {
  if (t == quant::Type::Q3_K) {
    std::memcpy(blk + 108, s + 2 * r, 2);
    int sc[16];
    for (int j = 0; j < 16; ++j) sc[j] = int(int8_t(s[32 + 16 * j + r])) + 32;
    quant::pack_q3_K_scales(sc, blk + 96);
    for (int j = 0; j < 64; ++j) blk[32 + j] = q[(j / 4) * kPanelGroupBytes + r * 4 + j % 4];
    for (int j = 0; j < 32; ++j) blk[j] = q[(16 + j / 4) * kPanelGroupBytes + r * 4 + j % 4];
    return;
  }
  if (t == quant::Type::Q2_K) {
    std::memcpy(blk + 80, s + 2 * r, 2);
    std::memcpy(blk + 82, s + 32 + 2 * r, 2);
    for (int j = 0; j < 16; ++j) blk[j] = uint8_t(s[64 + 16 * j + r] | s[320 + 16 * j + r] << 4);
    for (int j = 0; j < 64; ++j) blk[16 + j] = q[(j / 4) * kPanelGroupBytes + r * 4 + j % 4];
    return;
  }
  if (t == quant::Type::Q4_1 || t == quant::Type::Q5_0 || t == quant::Type::Q5_1) {
    const bool offset = t != quant::Type::Q5_0;
    std::memcpy(blk, s + 2 * r, 2);
    if (offset) std::memcpy(blk + 2, s + 2 * kPanelRows + 2 * r, 2);
    uint8_t* qs = blk + (t == quant::Type::Q4_1 ? 4 : offset ? 8 : 6);
    for (int j = 0; j < 16; ++j) qs[j] = q[(j / 4) * kPanelGroupBytes + r * 4 + j % 4];
    if (t != quant::Type::Q4_1) gather_qh(q + 4 * kPanelGroupBytes + r * 4, blk + (offset ? 4 : 2));
    return;
  }
  if (t == quant::Type::IQ4_XS) {
    std::memcpy(blk, s + 2 * r, 2);
    int scales_h = 0;
    std::memset(blk + 4, 0, 4);
    for (int j = 0; j < 8; ++j) {
      const int ls = int(int8_t(s[32 + 16 * j + r])) + 32;
      blk[4 + j / 2] = uint8_t(blk[4 + j / 2] | (ls & 15) << (4 * (j % 2)));
      scales_h |= (ls >> 4) << (2 * j);
    }
    blk[2] = uint8_t(scales_h), blk[3] = uint8_t(scales_h >> 8);
    for (int j = 0; j < 128; ++j) blk[8 + j] = q[(j / 4) * kPanelGroupBytes + r * 4 + j % 4];
    return;
  }
  if (t == quant::Type::Q6_K) {
    std::memcpy(blk + 208, s + 2 * r, 2);
    for (int j = 0; j < 16; ++j) blk[192 + j] = s[32 + 16 * j + r];
    for (int j = 0; j < 192; ++j) blk[j] = q[(j / 4) * kPanelGroupBytes + r * 4 + j % 4];
    return;
  }
  if (t == quant::Type::Q4_K || t == quant::Type::Q5_K) {
    std::memcpy(blk, s + 2 * r, 2);
    std::memcpy(blk + 2, s + 32 + 2 * r, 2);
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
      sc[j] = s[64 + 16 * j + r];
      m[j] = s[192 + 16 * j + r];
    }
    pack_k_scales(sc, m, blk + 4);
    const int qs = t == quant::Type::Q4_K ? 16 : 48;
    for (int j = 0; j < 128; ++j) blk[qs + j] = q[(j / 4) * kPanelGroupBytes + r * 4 + j % 4];
    if (t == quant::Type::Q5_K)
      for (int j = 0; j < 32; ++j) blk[16 + j] = q[(32 + j / 4) * kPanelGroupBytes + r * 4 + j % 4];
    return;
  }
  std::memcpy(blk, s + 2 * r, 2);
  const int n = t == quant::Type::Q8_0 ? 32 : 16;
  const uint8_t flip = t == quant::Type::Q8_0 ? 0x80 : 0;
  for (int j = 0; j < n; ++j) blk[2 + j] = q[(j / 4) * kPanelGroupBytes + r * 4 + j % 4] ^ flip;
}

}  // namespace

void QPanels::Free::operator()(uint8_t* p) const {
  if (owned) std::free(p);
}

bool QPanels::supports(quant::Type type) {
  return type == quant::Type::Q8_0 || type == quant::Type::Q4_0 || type == quant::Type::Q4_K ||
         type == quant::Type::Q5_K || type == quant::Type::Q6_K || type == quant::Type::IQ4_NL ||
         type == quant::Type::IQ4_XS || type == quant::Type::Q4_1 || type == quant::Type::Q5_0 ||
         type == quant::Type::Q5_1 || type == quant::Type::Q2_K || type == quant::Type::Q3_K;
}

// A QPanels' shape and sizes, no memory: what pack and packed_bytes share.
QPanels QPanels::shaped(quant::Type type, int64_t n, int64_t k) {
  ORK_CHECK(supports(type), "ops::QPanels: no panel layout for ", quant::traits(type).name);
  const Geometry g = geometry(type);
  ORK_CHECK(n > 0 && k > 0 && k % g.block_elems == 0, "ops::QPanels: shape N=", n, " K=", k,
            " is not N > 0 rows of a positive multiple of ", g.block_elems, " (", quant::traits(type).name, ")");
  QPanels out;
  out.type_ = type;
  out.n_ = n;
  out.k_ = k;
  const int64_t nb = k / g.block_elems;
  out.block_elems_ = g.block_elems;
  out.block_bytes_ = g.quant_bytes;
  out.scale_bytes_ = int64_t(align_up(uint64_t(nb * g.scale_bytes), 64));
  out.panel_bytes_ = out.scale_bytes_ + nb * out.block_bytes_;
  checked_mul(uint64_t(out.stored_panels()), uint64_t(out.panel_bytes_), "QPanels size");
  return out;
}

uint64_t QPanels::packed_bytes(quant::Type type, int64_t n, int64_t k) { return shaped(type, n, k).bytes(); }

QPanels QPanels::pack(quant::Type type, const void* data, int64_t n, int64_t k, ThreadPool* pool,
                      HugePageArena* arena) {
  QPanels out = shaped(type, n, k);
  const Geometry g = geometry(type);
  const int64_t nb = out.blocks();
  const uint64_t total = out.bytes();
  uint8_t* mem = nullptr;
  if (arena != nullptr) {
    mem = arena->take(size_t(total));
    out.data_ = std::unique_ptr<uint8_t[], Free>(mem, Free(false));
  } else {
    mem = static_cast<uint8_t*>(std::aligned_alloc(64, size_t(align_up(total, 64))));
    ORK_CHECK(mem != nullptr, "ops::QPanels: cannot allocate ", total, " bytes");
    out.data_.reset(mem);
  }

  const auto* src = static_cast<const uint8_t*>(data);
  const int64_t row_bytes = nb * g.gguf_bytes;
  // Padding rows: scales 0, weights 0 (0x80 for Q8_0, nibbles 8 for Q4_0; the K types: scales 0).
  const uint8_t zero_weight = type == quant::Type::Q8_0 ? 0x80 : (type == quant::Type::Q4_0 ? 0x88 : 0);
  // (IQ4, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K padding rows: scales 0, so the output is 0 whatever their quants.)
  const auto pack_panels = [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      uint8_t* panel = mem + p * out.panel_bytes_;
      std::memset(panel, 0, size_t(out.scale_bytes_));
      std::memset(panel + out.scale_bytes_, zero_weight, size_t(out.panel_bytes_ - out.scale_bytes_));
      for (int r = 0; r < kPanelRows && p * kPanelRows + r < n; ++r) {
        const uint8_t* row = src + (p * kPanelRows + r) * row_bytes;
        for (int64_t b = 0; b < nb; ++b)
          put_block(type, row + b * g.gguf_bytes, r, panel + b * g.scale_bytes,
                    panel + out.scale_bytes_ + b * out.block_bytes_);
      }
    }
  };
  // The paired types: pairs of panels, block by block (qpanels.h); padding as above.
  const auto pack_pairs = [&](int64_t pair0, int64_t pair1) {
    const PairLayout& pl = pair_layout(type);
    for (int64_t pr = pair0; pr < pair1; ++pr) {
      uint8_t* pair = mem + 2 * pr * out.panel_bytes_;
      std::memset(pair, zero_weight, size_t(2 * out.panel_bytes_));
      for (int64_t b = 0; b < nb; ++b) std::memset(pl.scales(pair, b, 0), 0, size_t(2 * pl.scale));
      for (int c = 0; c < 2; ++c)
        for (int r = 0; r < kPanelRows && (2 * pr + c) * kPanelRows + r < n; ++r) {
          const uint8_t* row = src + ((2 * pr + c) * kPanelRows + r) * row_bytes;
          for (int64_t b = 0; b < nb; ++b)
            put_block(type, row + b * g.gguf_bytes, r, pl.scales(pair, b, c), pl.quants(pair, b, c));
        }
    }
  };
  const int64_t units = paired(type) ? out.stored_panels() / 2 : out.panels();
  const auto pack_units = [&](int64_t u0, int64_t u1) {
    if (paired(type))
      pack_pairs(u0, u1);
    else
      pack_panels(u0, u1);
  };
  if (pool != nullptr)
    pool->parallel_for(units, 4, pack_units);
  else
    pack_units(0, units);
  return out;
}

void QPanels::unpack(void* data) const {
  auto* dst = static_cast<uint8_t*>(data);
  const Geometry g = geometry(type_);
  const int64_t nb = blocks();
  const PairLayout& pl = pair_layout(type_);  // for the paired types
  for (int64_t j = 0; j < n_; ++j) {
    const int64_t pn = j / kPanelRows;
    const int r = int(j % kPanelRows), c = int(pn % 2);
    const uint8_t* p = panel(paired(type_) ? pn - c : pn);
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* blk = dst + (j * nb + b) * g.gguf_bytes;
      if (paired(type_))
        get_block(type_, pl.scales(p, b, c), pl.quants(p, b, c), r, blk);
      else
        get_block(type_, p + b * g.scale_bytes, p + scale_bytes_ + b * block_bytes_, r, blk);
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
    case Isa::kAvx2: k = panel_kernels_avx2(); break;
  }
  if (k == nullptr) return nullptr;
  switch (type) {
    case quant::Type::Q8_0: return k->q8_0;
    case quant::Type::Q4_0: return k->q4_0;
    case quant::Type::Q4_K: return k->q4_k;
    case quant::Type::Q6_K: return k->q6_k;
    case quant::Type::Q5_K: return k->q5_k;
    case quant::Type::IQ4_NL: return k->iq4_nl;
    case quant::Type::IQ4_XS: return k->iq4_xs;
    case quant::Type::Q4_1: return k->q4_1;
    case quant::Type::Q5_0: return k->q5_0;
    case quant::Type::Q5_1: return k->q5_1;
    case quant::Type::Q2_K: return k->q2_k;
    case quant::Type::Q3_K: return k->q3_k;
    default: return nullptr;
  }
}

PanelTileFn panel_two_tiles_kernel(quant::Type type, Isa isa) {
  const PanelKernels* k = isa == Isa::kAvx512Vnni && isa_supported(isa) ? panel_two_tiles_avx512vnni() : nullptr;
  if (k == nullptr) return nullptr;
  switch (type) {
    case quant::Type::Q8_0: return k->q8_0;
    default: return nullptr;
  }
}

Isa best_panel_isa(quant::Type type) {
  ORK_CHECK(QPanels::supports(type), "ops::best_panel_isa: no panel layout for ", quant::traits(type).name);
  const std::vector<Isa> isas = supported_isas();
  for (auto it = isas.rbegin(); it != isas.rend(); ++it)
    if (panel_kernel(type, *it) != nullptr) return *it;
  return Isa::kScalar;
}

void matmul_qpanels(ThreadPool& pool, const float* x, int64_t m, const QPanels& w, float* y) {
  matmul_qpanels(pool, x, m, w, y, best_panel_isa(w.type()));
}

namespace {

ActFormat act_format(const QPanels& w) {
  return w.block_elems() == quant::kQK_K ? ActFormat::kQ8K : ActFormat::kQ8A;
}

// One weight of a panel matmul: its kernel, the tiles it spans and where its outputs go; two_tiles
// its decode kernel over two consecutive tiles (qpanels_two_tiles.h), or null.
struct PanelJob {
  const QPanels* w;
  PanelTileFn fn;
  float* y;
  int64_t n_tiles;
  PanelTileFn two_tiles = nullptr;
};

// Weight bytes a decode (M = 1) piece covers: a few microseconds of one thread's reading here, so a
// thread done early waits at most about that long. Paired kernels_bench BM_QPanelsModelDecode (6
// pairs, Q8_0 / Q4_K / Q6_K), 64 KiB, 128 KiB, 256 KiB and 1 MiB all within this VM's noise of each
// other (1 MiB the lowest on Q6_K); 128 KiB keeps a slow core's last piece short (docs/ops.md,
// "2026-12-07, decode parts").
constexpr int64_t kDecodePieceBytes = 128 << 10;
// A part's last pieces shrink to this share of a piece (PartClaims' tail piece: 16 KiB, half a
// microsecond of one thread's reading), so the two threads of a decode loop end within about that
// of each other rather than of half a piece (≈ 2 µs a loop on the 150 M model, 25 loops a step).
constexpr int64_t kDecodeTailDivisor = 8;

// The panels and valid outputs of `tiles` consecutive tiles of w from panel p0 (the last may be short).
struct TileSpan {
  int np, ncol;
};
TileSpan tile_span(const QPanels& w, int64_t p0, int tiles) {
  const int np = int(std::min<int64_t>(tiles * kPanelTileMax, w.panels() - p0));
  return {np, int(std::min<int64_t>(np * kPanelRows, w.n() - p0 * kPanelRows))};
}

// Runs the tiles of every job (tiles of kPanelTileMax panels × blocks of activation rows) in one
// parallel loop over activations `act` (m rows of xs bytes).
// Prefill (m > 1) hands the tiles out in the pool's chunks. Decode (m = 1) reads every weight once,
// so the loop is a memory stream: each thread gets one contiguous part of the tiles (equal weight
// bytes, so a group of a Q4_K and a Q6_K weight splits evenly) and claims it front to back in
// pieces of about kDecodePieceBytes (PartClaims), so it reads one ascending stream whose prefetch
// runs on into its next piece (two consecutive tiles at once, two streams, for a weight whose ISA
// has a two-tile kernel: qpanels_two_tiles.h; its pieces then hold an even number of tiles); a
// thread done early takes pieces from the back of the others' parts (a late or slower core, an
// RK3588's A55 beside its A76 when unpinned). Each output is
// computed by one tile call either way, with the same operations: the results are the same bits.
void run_panel_jobs(ThreadPool& pool, std::span<const PanelJob> jobs, const uint8_t* act, int64_t xs, int64_t m) {
  int64_t total = 0;
  for (const PanelJob& j : jobs) total += j.n_tiles;
  const RowSplit rs = split_rows(m, total, pool.size(), 8);
  const int64_t m_blocks = rs.blocks, m_per = rs.per;
  const auto run_tasks = [&](int64_t begin, int64_t end) {
    size_t ji = 0;
    int64_t first = 0;  // the first task of jobs[ji]
    for (int64_t task = begin; task < end; ++task) {
      while (task >= first + jobs[ji].n_tiles * m_blocks) first += jobs[ji++].n_tiles * m_blocks;
      const PanelJob& j = jobs[ji];
      const QPanels& w = *j.w;
      const int64_t t = task - first;
      const int64_t p0 = (t / m_blocks) * kPanelTileMax;
      const auto [np, ncol] = tile_span(w, p0, 1);
      const int64_t i0 = (t % m_blocks) * m_per;
      const int64_t i1 = std::min(m, i0 + m_per);
      for (int64_t i = i0; i < i1; i += kPanelTileX) {
        const int nx = int(std::min<int64_t>(kPanelTileX, i1 - i));
        j.fn(w.blocks(), w.panel(p0), w.panel_bytes(), w.scale_bytes(), np, ncol, act + i * xs, xs, nx,
             j.y + i * w.n() + p0 * kPanelRows, w.n());
      }
    }
  };
  // Tasks [begin, end) one tile each, consecutive tiles of one weight in twos where it has a
  // two-tile kernel (the same operations per output: the same bits).
  const auto run_decode_tasks = [&](int64_t begin, int64_t end) {
    size_t ji = 0;
    int64_t first = 0;  // the first task of jobs[ji]
    for (int64_t task = begin; task < end;) {
      while (task >= first + jobs[ji].n_tiles) first += jobs[ji++].n_tiles;
      const PanelJob& j = jobs[ji];
      const QPanels& w = *j.w;
      const int64_t t = task - first;
      const bool two = j.two_tiles != nullptr && task + 1 < end && t + 1 < j.n_tiles;
      const int64_t p0 = t * kPanelTileMax;
      const auto [np, ncol] = tile_span(w, p0, two ? 2 : 1);
      (two ? j.two_tiles : j.fn)(w.blocks(), w.panel(p0), w.panel_bytes(), w.scale_bytes(), np, ncol, act, xs, 1,
                                 j.y + p0 * kPanelRows, w.n());
      task += two ? 2 : 1;
    }
  };
  if (m > 1) {
    pool.parallel_for(total * m_blocks, 1, run_tasks);
    return;
  }
  if (pool.size() == 1) {
    run_decode_tasks(0, total);
    return;
  }
  // Decode: m_blocks = 1, a task is a tile. Part edges at equal shares of the weights' bytes.
  const int threads = pool.size();
  int64_t total_bytes = 0;
  for (const PanelJob& j : jobs) total_bytes += j.n_tiles * kPanelTileMax * j.w->panel_bytes();
  // Edge of part p: the first task whose preceding bytes reach total_bytes · p / threads (past the
  // last task: total), found per job by division rather than a walk over its tiles.
  std::vector<int64_t> bounds(size_t(threads) + 1, total);
  bounds[0] = 0;
  int64_t first_task = 0, first_byte = 0;  // of the job below
  int part = 1;
  for (const PanelJob& j : jobs) {
    const int64_t tile_bytes = kPanelTileMax * j.w->panel_bytes();
    for (; part < threads; ++part) {
      const int64_t short_by = total_bytes * part - first_byte * threads;  // bytes · threads still to pass
      const int64_t t = short_by <= 0 ? 0 : (short_by + tile_bytes * threads - 1) / (tile_bytes * threads);
      if (t >= j.n_tiles) break;
      bounds[size_t(part)] = first_task + t;
    }
    first_task += j.n_tiles;
    first_byte += j.n_tiles * tile_bytes;
  }
  // With a two-tile kernel, pieces of an even number of tiles, so they run two at a time.
  const bool twos =
      std::any_of(jobs.begin(), jobs.end(), [](const PanelJob& j) { return j.two_tiles != nullptr; });
  const auto whole = [&](int64_t tasks) {
    return twos ? std::max<int64_t>(2, tasks + tasks % 2) : std::max<int64_t>(1, tasks);
  };
  const int64_t piece = whole(kDecodePieceBytes * total / std::max<int64_t>(1, total_bytes));
  PartClaims claims(bounds, piece, whole(piece / kDecodeTailDivisor));
  pool.run([&](int thread, int) {
    int64_t begin = 0, end = 0;
    while (claims.claim(thread, &begin, &end)) run_decode_tasks(begin, end);
  });
}

PanelJob panel_job(const QPanels& w, float* y, Isa isa) {
  const PanelTileFn fn = panel_kernel(w.type(), isa);
  ORK_CHECK(fn != nullptr, "ops::matmul_qpanels: no ", quant::traits(w.type()).name, " panel kernel for ISA '",
            isa_name(isa), "'");
  return PanelJob{&w, fn, y, (w.panels() + kPanelTileMax - 1) / kPanelTileMax, panel_two_tiles_kernel(w.type(), isa)};
}

}  // namespace

bool same_activations(const QPanels& a, const QPanels& b) {
  return a.k() == b.k() && a.block_elems() == b.block_elems();
}

void matmul_qpanels(ThreadPool& pool, const float* x, int64_t m, const QPanels& w, float* y,
                    Isa isa) {
  const PanelJob job = panel_job(w, y, isa);
  ORK_CHECK(m >= 0, "ops::matmul_qpanels: negative M=", m);
  if (m == 0) return;
  const ActFormat f = act_format(w);
  const uint8_t* act = quantize_activations(pool, f, x, m, w.k());
  run_panel_jobs(pool, std::span<const PanelJob>(&job, 1), act, act_row_bytes(f, w.k()), m);
}

void matmul_qpanels_group(ThreadPool& pool, const float* x, int64_t m, std::span<const QPanels* const> ws,
                          std::span<float* const> ys) {
  ORK_CHECK(!ws.empty() && ws.size() == ys.size(), "ops::matmul_qpanels_group: ", ws.size(), " weights, ",
            ys.size(), " outputs");
  ORK_CHECK(m >= 0, "ops::matmul_qpanels_group: negative M=", m);
  std::vector<PanelJob> jobs;
  jobs.reserve(ws.size());
  for (size_t i = 0; i < ws.size(); ++i) {
    ORK_CHECK(same_activations(*ws[i], *ws[0]), "ops::matmul_qpanels_group: weight ", i, " (K=", ws[i]->k(),
              ", blocks of ", ws[i]->block_elems(), ") does not share the activations of weight 0 (K=", ws[0]->k(),
              ", blocks of ", ws[0]->block_elems(), ")");
    jobs.push_back(panel_job(*ws[i], ys[i], best_panel_isa(ws[i]->type())));
  }
  if (m == 0) return;
  const ActFormat f = act_format(*ws[0]);
  const uint8_t* act = quantize_activations(pool, f, x, m, ws[0]->k());
  run_panel_jobs(pool, jobs, act, act_row_bytes(f, ws[0]->k()), m);
}

}  // namespace ork::ops
