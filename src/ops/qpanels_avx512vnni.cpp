// The Isa::kAvx512Vnni panel kernels of qpanels.h: 512-bit vpdpbusd of 16 panel rows (unsigned:
// Q8_0 quants + 128, Q4_0 / Q4_1 nibbles, Q5_0 / Q5_1 5-bit values, IQ4 grid values + 128) against four broadcast activation bytes (signed), a register
// tile of up to kPanelTileX activation rows × kPanelTileMax panels. Per block and output lane: the
// exact int32 dot (minus 128·Σx or 8·Σx), one f32 multiply of the scales and one FMA — the
// reference's operations.
#include "ops/qpanels.h"
#include "ops/qpanels_two_tiles.h"
#include "ops/prefetch.h"

#include "quant/blocks.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")
// GCC 12 reports the _mm512_undefined_ps() pass-through of its own cvt intrinsics as uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace ork::ops {
namespace {

template <int RX, int NP>
inline void zero(__m512 (&a)[RX][NP]) {
#pragma GCC unroll 8
  for (int i = 0; i < RX; ++i)
#pragma GCC unroll 8
    for (int c = 0; c < NP; ++c) a[i][c] = _mm512_setzero_ps();
}
template <int RX, int NP>
inline void zero(__m512i (&a)[RX][NP]) {
#pragma GCC unroll 8
  for (int i = 0; i < RX; ++i)
#pragma GCC unroll 8
    for (int c = 0; c < NP; ++c) a[i][c] = _mm512_setzero_si512();
}
// The RX activation rows of a tile (row stride xs bytes).
template <typename Act, int RX>
inline void row_pointers(const uint8_t* x, int64_t xs, const Act* (&xr)[RX]) {
#pragma GCC unroll 8
  for (int i = 0; i < RX; ++i) xr[i] = reinterpret_cast<const Act*>(x + i * xs);
}

// Writes the ncol first columns of a tile's accumulators (row i, panel c → y[i·ys + 16c ..]).
template <int RX, int NP>
inline void store_tile(const __m512 (&acc)[RX][NP], int ncol, float* y, int64_t ys) {
#pragma GCC unroll 8
  for (int i = 0; i < RX; ++i)
#pragma GCC unroll 8
    for (int c = 0; c < NP; ++c) {
      const int valid = ncol - c * kPanelRows;
      if (valid <= 0) break;  // a two-tile call's last panel past N (tile_pair32, S = 2)
      const __mmask16 m = valid >= 16 ? __mmask16(0xffff) : __mmask16((1u << valid) - 1);
      _mm512_mask_storeu_ps(y + i * ys + c * kPanelRows, m, acc[i][c]);
    }
}

// Adds the products of 4 consecutive quants of 16 rows (w[c], panel c) and the 4 activation bytes
// qs[first .. first+3] of block b to s[i][c], for every activation row i.
template <int RX, int NP>
inline void add_group(__m512i (&s)[RX][NP], const __m512i (&w)[NP], const BlockQ8A* const (&xr)[RX],
                      int64_t b, int first) {
#pragma GCC unroll 8
  for (int i = 0; i < RX; ++i) {
    int32_t xq;
    std::memcpy(&xq, xr[i][b].qs + first, 4);
    const __m512i xv = _mm512_set1_epi32(xq);
#pragma GCC unroll 8
    for (int c = 0; c < NP; ++c) s[i][c] = _mm512_dpbusd_epi32(s[i][c], w[c], xv);
  }
}

// s += the dots of one 32-element block stored as nibbles (Q4_0, IQ4_NL, Q4_1, Q5_0, Q5_1): byte
// group g of each panel holds elements 4g.. in its low nibbles and 16+4g.. in its high ones;
// weights(c, g, lo, hi) sets panel c's weights of group g as the unsigned bytes vpdpbusd takes.
template <int RX, int NP, typename Weights>
__attribute__((always_inline)) inline void add_nibble_groups(__m512i (&s)[RX][NP], const BlockQ8A* const (&xr)[RX],
                                                             int64_t b, Weights weights) {
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    __m512i lo[NP], hi[NP];
#pragma GCC unroll 8
    for (int c = 0; c < NP; ++c) weights(c, g, lo[c], hi[c]);
    add_group<RX, NP>(s, lo, xr, b, 4 * g);
    add_group<RX, NP>(s, hi, xr, b, 16 + 4 * g);
  }
}

// tsum[i][c] += (p[i][c] − zero·Σx_sub)·sc_c[sub] in exact int32, for the K types whose scale region
// holds int8 sub-block scales at sc + 32 + 16·sub of each panel (Q3_K, Q6_K).
template <int RX, int NP>
inline void add_signed_sub(const __m512i (&p)[RX][NP], int32_t zero, const uint8_t* sc, int64_t pb, int sub,
                           const quant::BlockQ8_K* const (&xr)[RX], int64_t b, __m512i (&tsum)[RX][NP]) {
#pragma GCC unroll 8
  for (int c = 0; c < NP; ++c) {
    const __m512i scv =
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc + c * pb + 32 + 16 * sub)));
#pragma GCC unroll 8
    for (int i = 0; i < RX; ++i) {
      const __m512i corr = _mm512_set1_epi32(zero * int32_t(xr[i][b].bsums[sub]));
      tsum[i][c] = _mm512_add_epi32(tsum[i][c], _mm512_mullo_epi32(_mm512_sub_epi32(p[i][c], corr), scv));
    }
  }
}

// acc[i][c] += f32(d_c)·d_x·f32(t[i][c]): the last step of the K types with one scale d per row and
// super-block (Q3_K, Q6_K, IQ4_XS), d the f16 d[16] at the start of each panel's `sc`.
template <int RX, int NP>
inline void add_super_block(const __m512i (&t)[RX][NP], const uint8_t* sc, int64_t pb,
                            const quant::BlockQ8_K* const (&xr)[RX], int64_t b, __m512 (&acc)[RX][NP]) {
#pragma GCC unroll 8
  for (int c = 0; c < NP; ++c) {
    const __m512 d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc + c * pb)));
#pragma GCC unroll 8
    for (int i = 0; i < RX; ++i)
      acc[i][c] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(xr[i][b].d)), _mm512_cvtepi32_ps(t[i][c]), acc[i][c]);
  }
}

// The IQ4 grid values + 128 (1..241: unsigned, as vpdpbusd wants) in every 128-bit lane, for vpshufb.
inline __m512i grid_table_u8() {
  alignas(64) uint8_t t[64];
  for (int i = 0; i < 64; ++i) t[i] = uint8_t(quant::kIQ4NLValues[i % 16] + 128);
  return _mm512_load_si512(t);
}

// IQ4_NL: the nibbles index the grid + 128.
template <int RX, int NP>
void tile_iq4_nl(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol,
                 const uint8_t* x, int64_t xs, float* y, int64_t ys) {
  __m512 acc[RX][NP];
  zero(acc);
  const BlockQ8A* xr[RX];
  row_pointers(x, xs, xr);

  constexpr int64_t kQuantBytes = 4 * kPanelGroupBytes;
  const __m512i grid = grid_table_u8();
  for (int64_t b = 0; b < nb; ++b) {
    if (RX == 1) {  // the block blocks_ahead() on: this tile's, or past its end the next tile's (as next_block)
      const int64_t a = b + blocks_ahead(kQuantBytes);
      if (a < nb) {
        for (int c = 0; c < NP; ++c) prefetch_bytes(panels + sb + a * kQuantBytes + c * pb, kQuantBytes);
      } else if (a - nb < nb) {
        for (int c = NP; c < 2 * NP; ++c) {
          if (a == nb) prefetch_bytes(panels + c * pb, 2 * kCacheLineBytes);  // its first scales
          prefetch_bytes(panels + sb + (a - nb) * kQuantBytes + c * pb, kQuantBytes);
        }
      }
    }
    __m512i s[RX][NP];
    zero(s);
    const uint8_t* q = panels + sb + b * 4 * kPanelGroupBytes;
    const __m512i m4 = _mm512_set1_epi8(15);
    add_nibble_groups<RX, NP>(s, xr, b, [&](int c, int g, __m512i& lo, __m512i& hi) __attribute__((always_inline)) {
      const __m512i v = _mm512_load_si512(reinterpret_cast<const void*>(q + c * pb + g * kPanelGroupBytes));
      lo = _mm512_shuffle_epi8(grid, _mm512_and_si512(v, m4));
      hi = _mm512_shuffle_epi8(grid, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
    });
    __m512 dw[NP];
    #pragma GCC unroll 8
    for (int c = 0; c < NP; ++c)
      dw[c] = _mm512_cvtph_ps(
          _mm256_load_si256(reinterpret_cast<const __m256i*>(panels + c * pb + b * kPanelRows * 2)));
    #pragma GCC unroll 8
    for (int i = 0; i < RX; ++i) {
      const __m512i corr = _mm512_set1_epi32(128 * xr[i][b].sum);
      const __m512 dx = _mm512_set1_ps(xr[i][b].d);
      #pragma GCC unroll 8
      for (int c = 0; c < NP; ++c) {
        const __m512 p = _mm512_cvtepi32_ps(_mm512_sub_epi32(s[i][c], corr));
        acc[i][c] = _mm512_fmadd_ps(_mm512_mul_ps(dw[c], dx), p, acc[i][c]);
      }
    }
  }
  store_tile<RX, NP>(acc, ncol, y, ys);
}

// ---- Q8_0 (Q4 false) and Q4_0 (Q4 true): panels in pairs, block by block (qpanels.h): the tile's
// NP panels are panel c = 0, 1 of the pair at `panels`, and one row's decode reads the pair as one
// stream, asking for the block blocks_ahead() on (past the pair's end: the next pair's, the next
// tile's). With S = 2 (decode only: RX 1, NP 2) the kernel walks two consecutive tiles — the pairs
// at `panels` and `panels` + 2·pb, outputs y[0 ..) and y[32 ..) — block b of the one, then block b
// of the other (qpanels_two_tiles.h): two streams a thread, each output with the one-tile
// kernel's operations. ----
template <bool Q4, int RX, int NP, int S = 1>
void tile_pair32(int64_t nb, const uint8_t* panels, int64_t pb, int ncol, const uint8_t* x, int64_t xs,
                 float* y, int64_t ys) {
  static_assert(S == 1 || (S == 2 && RX == 1 && NP == 2));
  constexpr const PairLayout& kPairs = Q4 ? kQ4_0Pairs : kQ8_0Pairs;
  __m512 acc[S][RX][NP];
  for (auto& a : acc) zero(a);
  const BlockQ8A* xr[RX];
  row_pointers(x, xs, xr);
  const __m512i m4 = _mm512_set1_epi8(15);
  // Q8_0 asks four times as far ahead (16 blocks, 17 KiB): with the least arithmetic per byte its
  // tile consumes a pair fastest — twice as far measured × 1.04–1.07 against 4 blocks in an
  // in-process A/B (docs/ops.md, sixth session); Q4_0 at half its distance measured 0.99–1.07 and
  // stays. Q4_0 asks for every fourth line of the block ahead and leaves the rest to the hardware
  // prefetcher, which follows the pair's one stream: × 1.09–1.16 against every line (every other line
  // 1.00–1.13, every eighth as every fourth); Q8_0, consuming the stream twice as fast, measured
  // × 0.93 with every fourth line.
  // Q8_0 then asks for every line again, kAgain blocks ahead: as if the core let go of some of the
  // first requests (it has few places for misses in flight, and a software prefetch that finds none
  // may be dropped), a later one brings back what would otherwise be a demand miss. One request again
  // at 2 blocks (after one at 8): one 125 MB matmul × 1.09–1.13 on one thread, × 1.04–1.06 on two with
  // cores of their own and × 1.17–1.20 when they share one; a whole decode × 1.07–1.10 and × 1.12
  // (docs/ops.md, "ninth session"). Every other line the second time: × 1.01–1.05. Two again, at 4
  // and 2 (after one at 16), against that: a whole decode × 1.09–1.15 when the threads share a core,
  // × 1.00–1.02 with cores of their own; (8; 4, 2) × 1.10 / 1.02, (16; 8, 2) × 1.12 / 1.00 (docs/ops.md,
  // "tenth session").
  constexpr int64_t kAhead = (Q4 ? 1 : 4) * blocks_ahead(kPairs.block());
  constexpr int64_t kAgain[] = {4, 2};
  constexpr int64_t kLineStep = (Q4 ? 4 : 1) * kCacheLineBytes;
  const int64_t pair_bytes = 2 * pb;
  for (int64_t b = 0; b < nb; ++b) {
    if (RX == 1) {
      // Stream t's block b + kAhead; past its end, the same stream's of the next call (S pairs on).
#pragma GCC unroll 2
      for (int t = 0; t < S; ++t)
        if (const uint8_t* ahead =
                pair_block_ahead(panels + t * pair_bytes, S * pair_bytes, kPairs.block(), nb, b + kAhead))
          prefetch_bytes(ahead, kPairs.block(), kLineStep);
      if constexpr (!Q4)
#pragma GCC unroll 2
        for (int64_t distance : kAgain)
#pragma GCC unroll 2
          for (int t = 0; t < S; ++t)
            if (const uint8_t* again =
                    pair_block_ahead(panels + t * pair_bytes, S * pair_bytes, kPairs.block(), nb, b + distance))
              prefetch_bytes(again, kPairs.block(), kLineStep);
    }
#pragma GCC unroll 2
    for (int t = 0; t < S; ++t) {
      const uint8_t* pair = panels + t * pair_bytes;
      __m512i s[RX][NP];
      zero(s);
      if constexpr (Q4) {
        add_nibble_groups<RX, NP>(s, xr, b, [&](int c, int g, __m512i& lo, __m512i& hi) __attribute__((always_inline)) {
          const __m512i v =
              _mm512_load_si512(reinterpret_cast<const void*>(kPairs.quants(pair, b, c) + g * kPanelGroupBytes));
          lo = _mm512_and_si512(v, m4);
          hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        });
      } else {
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) {  // byte group g: elements 4g .. 4g+3, each quant + 128
          __m512i w[NP];
#pragma GCC unroll 8
          for (int c = 0; c < NP; ++c)
            w[c] = _mm512_load_si512(reinterpret_cast<const void*>(kPairs.quants(pair, b, c) + g * kPanelGroupBytes));
          add_group<RX, NP>(s, w, xr, b, 4 * g);
        }
      }
#pragma GCC unroll 8
      for (int c = 0; c < NP; ++c) {
        const __m512 dw =
            _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(kPairs.scales(pair, b, c))));
#pragma GCC unroll 8
        for (int i = 0; i < RX; ++i) {
          const __m512i corr = _mm512_set1_epi32((Q4 ? 8 : 128) * xr[i][b].sum);  // Σ (w + zero)·x − zero·Σx
          const __m512 p = _mm512_cvtepi32_ps(_mm512_sub_epi32(s[i][c], corr));
          acc[t][i][c] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(xr[i][b].d)), p, acc[t][i][c]);
        }
      }
    }
  }
  store_tile<RX, NP>(acc[0], std::min(ncol, NP * kPanelRows), y, ys);
  if constexpr (S == 2) store_tile<RX, NP>(acc[1], ncol - NP * kPanelRows, y + NP * kPanelRows, ys);
}

// ---- Q4_1, Q5_0, Q5_1: the nibbles (0..15) | the 5th bits (bits g and 4 + g of the 5th group's
// bytes) at bit 4 — unsigned, as vpdpbusd wants. Q5_0 subtracts 16·Σx; Q4_1 / Q5_1 add the offset
// term m·d_x·Σx as a second FMA. ----
enum class Legacy { kQ4_1, kQ5_0, kQ5_1 };

template <Legacy T, int RX, int NP>
void tile_legacy(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol,
                 const uint8_t* x, int64_t xs, float* y, int64_t ys) {
  constexpr bool kQ5 = T != Legacy::kQ4_1, kOffset = T != Legacy::kQ5_0;
  constexpr int64_t kQuantBytes = (kQ5 ? 5 : 4) * kPanelGroupBytes;
  constexpr int64_t kScaleBytes = (kOffset ? 4 : 2) * kPanelRows;
  __m512 acc[RX][NP];
  zero(acc);
  const BlockQ8A* xr[RX];
  row_pointers(x, xs, xr);
  const __m512i m4 = _mm512_set1_epi8(15), m10 = _mm512_set1_epi8(0x10);

  for (int64_t b = 0; b < nb; ++b) {
    __m512i s[RX][NP];
    zero(s);
    const uint8_t* q = panels + sb + b * kQuantBytes;
    add_nibble_groups<RX, NP>(s, xr, b, [&](int c, int g, __m512i& lo, __m512i& hi) __attribute__((always_inline)) {
      const __m512i v = _mm512_load_si512(reinterpret_cast<const void*>(q + c * pb + g * kPanelGroupBytes));
      lo = _mm512_and_si512(v, m4);
      hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
      if constexpr (kQ5) {
        const __m512i h = _mm512_load_si512(reinterpret_cast<const void*>(q + c * pb + 4 * kPanelGroupBytes));
        lo = _mm512_or_si512(lo, _mm512_and_si512(_mm512_slli_epi16(h, unsigned(4 - g)), m10));
        hi = _mm512_or_si512(hi, _mm512_and_si512(_mm512_srli_epi16(h, unsigned(g)), m10));
      }
    });
    __m512 dw[NP], mw[NP];
#pragma GCC unroll 8
    for (int c = 0; c < NP; ++c) {
      const uint8_t* sc = panels + c * pb + b * kScaleBytes;
      dw[c] = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc)));
      if constexpr (kOffset)
        mw[c] = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc + 2 * kPanelRows)));
    }
#pragma GCC unroll 8
    for (int i = 0; i < RX; ++i) {
      const __m512 dx = _mm512_set1_ps(xr[i][b].d);
      const __m512i corr = _mm512_set1_epi32(kOffset ? 0 : 16 * xr[i][b].sum);
#pragma GCC unroll 8
      for (int c = 0; c < NP; ++c) {
        const __m512 p = _mm512_cvtepi32_ps(_mm512_sub_epi32(s[i][c], corr));
        acc[i][c] = _mm512_fmadd_ps(_mm512_mul_ps(dw[c], dx), p, acc[i][c]);
        if constexpr (kOffset)
          acc[i][c] = _mm512_fmadd_ps(_mm512_mul_ps(mw[c], dx), _mm512_set1_ps(float(xr[i][b].sum)), acc[i][c]);
      }
    }
  }
  store_tile<RX, NP>(acc, ncol, y, ys);
}

// The zero-point corrections z·Σ_{e∈s} x of Q6_K and IQ4_XS are broadcast to every row's lane once
// per sub-block. Made from the activation row's bsums as a scalar and moved into a vector
// (vpbroadcastd from a general register) they cost the one-row Q6_K tile 5–7 % of its rate on
// weights hot in L2 (IQ4_XS 0–3 %); made for the whole block with a few vector instructions and
// stored, each is a broadcast load instead (docs/ops.md, "eighth session"). The same exact int32.
//
// The sums Σx of xb's eight sub-blocks of 32 (bsums[2j] + bsums[2j + 1]) as int32: the Q4_K / Q5_K
// mins and IQ4_XS's zero point both weigh them.
inline __m256i sub_block_sums(const quant::BlockQ8_K& xb) {
  return _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.bsums)), _mm256_set1_epi16(1));
}

// 32·Σx of each of xb's 16 sub-blocks of 16 (Q6_K: q − 32): out[s] = 32·bsums[s].
inline void q6_k_zero_sums(const quant::BlockQ8_K& xb, int32_t (&out)[16]) {
  const __m512i bsums = _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.bsums)));
  _mm512_storeu_si512(out, _mm512_slli_epi32(bsums, 5));
}
// 128·Σx of each of xb's 8 sub-blocks of 32 (IQ4_XS: grid + 128): out[j] = 128·(bsums[2j] + bsums[2j + 1]).
inline void iq4_xs_zero_sums(const quant::BlockQ8_K& xb, int32_t (&out)[8]) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_slli_epi32(sub_block_sums(xb), 7));
}

// The mins term Σ_s m_s·Σ_{e∈s} x of Q4_K / Q5_K as four vpdpwssd — one per pair of sub-blocks, on
// int16 pairs (m of sub 2k, m of sub 2k+1) per row against (Σx of sub 2k, Σx of sub 2k+1): the same
// exact int32 as eight vpmulld and adds (m ≤ 63, |Σx| ≤ 32·128 = 4096), in half the instructions.
// The Σx pairs are made once per block and row, for every panel. On weights hot in L2 (throwaway
// programs, one thread) the Q4_K tile ran × 1.04 faster at M = 1 and × 1.05 at M = 16; a whole
// decode step × 1.01–1.02 (docs/ops.md, "eighth session").
//
// The sums of xb's sub-blocks 2k and 2k+1 as an int16 pair, broadcast: pairs[k], k = 0..3.
inline void sub_sum_pairs(const quant::BlockQ8_K& xb, __m512i (&pairs)[4]) {
  const __m256i s = sub_block_sums(xb);
  // Per 128-bit lane, its four sums as int16 (twice): int32 0, 1 hold subs (0, 1), (2, 3); 4, 5 (4, 5), (6, 7).
  const __m512i packed = _mm512_castsi256_si512(_mm256_packs_epi32(s, s));
  constexpr int kAt[4] = {0, 1, 4, 5};
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) pairs[k] = _mm512_permutexvar_epi32(_mm512_set1_epi32(kAt[k]), packed);
}
// The 16 rows' bytes of two consecutive sub-blocks (m[2k][16] then m[2k+1][16] at p) as int16 pairs
// (m[2k][r], m[2k+1][r]) in 32-bit lane r.
inline __m512i row_pairs(const uint8_t* p) {
  alignas(64) static constexpr uint16_t kInterleave[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,
                                                          21, 6, 22, 7, 23, 8,  24, 9,  25, 10, 26,
                                                          11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  return _mm512_permutexvar_epi16(_mm512_load_si512(kInterleave),
                                  _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
}

// ---- Q4_K and Q5_K: per super-block, 8 sub-blocks of 32; each 64-byte group vector holds 4 quants
// of 16 rows for sub-block 2j (low nibbles) and 2j+1 (high nibbles). Q5_K: qh group g (after the 32
// nibble groups) holds the 5th bits of the same elements, bit `sub` of each byte; vptestmb finds
// the bytes with it set and a masked vpaddb adds 16 there (q in [0, 31]): × 1.04 against a 16-bit
// shift and a vpternlogd (docs/ops.md, "eighth session"). ----
template <bool Q5, int RX, int NP>
void tile_q45_k_fixed(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol,
                      const uint8_t* x, int64_t xs, float* y, int64_t ys) {
  constexpr int64_t kQuantBytes = Q5 ? kPanelQ5KQuantBytes : kPanelQ4KQuantBytes;
  __m512 acc[RX][NP];
  zero(acc);
  const quant::BlockQ8_K* xr[RX];
  row_pointers(x, xs, xr);
  const __m512i m4 = _mm512_set1_epi8(15);
  [[maybe_unused]] const __m512i m10 = _mm512_set1_epi8(0x10);

  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = panels + sb + b * kQuantBytes;
    // The block blocks_ahead() on, and the next one again — a second request for what was asked one
    // block earlier, as Q8_0's kAgain (tile_pair32): a whole decode × 1.04–1.15 (Q4_K_M) and
    // × 1.07–1.13 (Q5_K_M) in-process, docs/ops.md, "ninth session".
    NextBlock next{}, again{};
    if (RX == 1) {
      next = next_block<NP>(panels, pb, sb, b, nb, kQuantBytes, kPanelQ4KScaleBytes, blocks_ahead(kQuantBytes));
      again = next_block<NP>(panels, pb, sb, b, nb, kQuantBytes, kPanelQ4KScaleBytes, 1);
    }
    const uint8_t* sc = panels + b * kPanelQ4KScaleBytes;
    __m512i isum[RX][NP];
    zero(isum);
#pragma GCC unroll 1
    for (int j = 0; j < 4; ++j)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int sub = 2 * j + h;
      if (RX == 1) {
        prefetch_part<NP>(next, pb, kQuantBytes, sub, 8);
        prefetch_part<NP>(again, pb, kQuantBytes, sub, 8);
      }
      [[maybe_unused]] const __m512i bit = _mm512_set1_epi8(char(1 << sub));  // Q5_K: sub's bit of a qh byte
      __m512i p[RX][NP];
      zero(p);
      const uint8_t* qj = q + j * 8 * kPanelGroupBytes;
      [[maybe_unused]] const uint8_t* qh = q + 32 * kPanelGroupBytes;
#pragma GCC unroll 8
      for (int g = 0; g < 8; ++g) {
        __m512i w[NP];
#pragma GCC unroll 8
        for (int c = 0; c < NP; ++c) {
          const __m512i v = _mm512_load_si512(reinterpret_cast<const void*>(qj + c * pb + g * kPanelGroupBytes));
          w[c] = _mm512_and_si512(h ? _mm512_srli_epi16(v, 4) : v, m4);
          if constexpr (Q5) {  // + 16 where the qh byte has sub's bit (vptestmb, a masked vpaddb)
            const __m512i hv = _mm512_load_si512(reinterpret_cast<const void*>(qh + c * pb + g * kPanelGroupBytes));
            w[c] = _mm512_mask_add_epi8(w[c], _mm512_test_epi8_mask(hv, bit), w[c], m10);
          }
        }
#pragma GCC unroll 8
        for (int i = 0; i < RX; ++i) {
          int32_t xq;
          std::memcpy(&xq, xr[i][b].qs + 32 * sub + 4 * g, 4);
          const __m512i xv = _mm512_set1_epi32(xq);
#pragma GCC unroll 8
          for (int c = 0; c < NP; ++c) p[i][c] = _mm512_dpbusd_epi32(p[i][c], w[c], xv);
        }
      }
#pragma GCC unroll 8
      for (int c = 0; c < NP; ++c) {
        const __m512i scv = _mm512_cvtepu8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(sc + c * pb + 64 + 16 * sub)));
#pragma GCC unroll 8
        for (int i = 0; i < RX; ++i)
          isum[i][c] = _mm512_add_epi32(isum[i][c], _mm512_mullo_epi32(p[i][c], scv));
      }
    }
    __m512i pairs[RX][4];
#pragma GCC unroll 8
    for (int i = 0; i < RX; ++i) sub_sum_pairs(xr[i][b], pairs[i]);
#pragma GCC unroll 8
    for (int c = 0; c < NP; ++c) {
      const __m512 d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc + c * pb)));
      const __m512 dmin = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc + c * pb + 32)));
      __m512i mins[4];  // (m of sub 2k, m of sub 2k+1) as an int16 pair per row
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) mins[k] = row_pairs(sc + c * pb + 192 + 32 * k);
#pragma GCC unroll 8
      for (int i = 0; i < RX; ++i) {
        __m512i msum = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) msum = _mm512_dpwssd_epi32(msum, mins[k], pairs[i][k]);
        const __m512 dx = _mm512_set1_ps(xr[i][b].d);
        acc[i][c] = _mm512_fmadd_ps(_mm512_mul_ps(d, dx), _mm512_cvtepi32_ps(isum[i][c]), acc[i][c]);
        acc[i][c] = _mm512_fnmadd_ps(_mm512_mul_ps(dmin, dx), _mm512_cvtepi32_ps(msum), acc[i][c]);
      }
    }
  }
  store_tile<RX, NP>(acc, ncol, y, ys);
}

// ---- Q2_K: q = 2 bits of the panel byte (unsigned 0..3); per sub-block of 16 (4 groups) the exact
// dot times the row's 4-bit scale (vpmulld), summed in int32; the mins over the 16 bsums. ----
template <int RX, int NP>
void tile_q2_k_fixed(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol,
                     const uint8_t* x, int64_t xs, float* y, int64_t ys) {
  __m512 acc[RX][NP];
  zero(acc);
  const quant::BlockQ8_K* xr[RX];
  row_pointers(x, xs, xr);
  const __m512i m3 = _mm512_set1_epi8(3);

  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = panels + sb + b * kPanelQ2KQuantBytes;
    NextBlock next{};
    if (RX == 1) next = next_block<NP>(panels, pb, sb, b, nb, kPanelQ2KQuantBytes, kPanelQ2KScaleBytes,
                                     blocks_ahead(kPanelQ2KQuantBytes));
    const uint8_t* sc = panels + b * kPanelQ2KScaleBytes;
    __m512i isum[RX][NP];
    zero(isum);
#pragma GCC unroll 1
    for (int sub = 0; sub < 16; ++sub) {
      if (RX == 1) prefetch_part<NP>(next, pb, kPanelQ2KQuantBytes, sub, 16);
      const uint8_t* qg = q + (8 * (sub / 8) + 4 * (sub % 2)) * kPanelGroupBytes;
      const __m128i count = _mm_cvtsi32_si128(2 * ((sub % 8) / 2));
      __m512i p[RX][NP];
      zero(p);
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        __m512i w[NP];
#pragma GCC unroll 8
        for (int c = 0; c < NP; ++c) {
          const __m512i v = _mm512_load_si512(reinterpret_cast<const void*>(qg + c * pb + k * kPanelGroupBytes));
          w[c] = _mm512_and_si512(_mm512_srl_epi16(v, count), m3);
        }
#pragma GCC unroll 8
        for (int i = 0; i < RX; ++i) {
          int32_t xq;
          std::memcpy(&xq, xr[i][b].qs + 16 * sub + 4 * k, 4);
          const __m512i xv = _mm512_set1_epi32(xq);
#pragma GCC unroll 8
          for (int c = 0; c < NP; ++c) p[i][c] = _mm512_dpbusd_epi32(p[i][c], w[c], xv);
        }
      }
#pragma GCC unroll 8
      for (int c = 0; c < NP; ++c) {
        const __m512i scv = _mm512_cvtepu8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(sc + c * pb + 64 + 16 * sub)));
#pragma GCC unroll 8
        for (int i = 0; i < RX; ++i) isum[i][c] = _mm512_add_epi32(isum[i][c], _mm512_mullo_epi32(p[i][c], scv));
      }
    }
#pragma GCC unroll 8
    for (int c = 0; c < NP; ++c) {
      const __m512 d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc + c * pb)));
      const __m512 dmin = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc + c * pb + 32)));
#pragma GCC unroll 8
      for (int i = 0; i < RX; ++i) {
        __m512i msum = _mm512_setzero_si512();
#pragma GCC unroll 16
        for (int sub = 0; sub < 16; ++sub) {
          const __m512i mv = _mm512_cvtepu8_epi32(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(sc + c * pb + 320 + 16 * sub)));
          msum = _mm512_add_epi32(msum, _mm512_mullo_epi32(mv, _mm512_set1_epi32(xr[i][b].bsums[sub])));
        }
        const __m512 dx = _mm512_set1_ps(xr[i][b].d);
        acc[i][c] = _mm512_fmadd_ps(_mm512_mul_ps(d, dx), _mm512_cvtepi32_ps(isum[i][c]), acc[i][c]);
        acc[i][c] = _mm512_fnmadd_ps(_mm512_mul_ps(dmin, dx), _mm512_cvtepi32_ps(msum), acc[i][c]);
      }
    }
  }
  store_tile<RX, NP>(acc, ncol, y, ys);
}

// ---- Q3_K: q = the 2 low bits of the q group byte, + 4 where the h group byte has the element's
// high bit (vptestmb into a mask, a masked byte add): unsigned 0..7; per sub-block of 16 (4 groups)
// the exact dot minus 4·Σx, times the row's scale − 32 (int8), summed in int32 over the super-block. ----
template <int RX, int NP>
void tile_q3_k_fixed(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol,
                     const uint8_t* x, int64_t xs, float* y, int64_t ys) {
  __m512 acc[RX][NP];
  zero(acc);
  const quant::BlockQ8_K* xr[RX];
  row_pointers(x, xs, xr);
  const __m512i m3 = _mm512_set1_epi8(3), four = _mm512_set1_epi8(4);

  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = panels + sb + b * kPanelQ3KQuantBytes;
    NextBlock next{};
    if (RX == 1) next = next_block<NP>(panels, pb, sb, b, nb, kPanelQ3KQuantBytes, kPanelQ3KScaleBytes,
                                     blocks_ahead(kPanelQ3KQuantBytes));
    const uint8_t* sc = panels + b * kPanelQ3KScaleBytes;
    __m512i tsum[RX][NP];
    zero(tsum);
#pragma GCC unroll 1
    for (int sub = 0; sub < 16; ++sub) {  // sub-block 8h + 2g + u: q groups 8h + 4u + k, h groups 4u + k
      const int h = sub / 8, g = (sub % 8) / 2, u = sub % 2;
      if (RX == 1) prefetch_part<NP>(next, pb, kPanelQ3KQuantBytes, sub, 16);
      const uint8_t* qg = q + (8 * h + 4 * u) * kPanelGroupBytes;
      const uint8_t* hg = q + (16 + 4 * u) * kPanelGroupBytes;
      const __m128i count = _mm_cvtsi32_si128(2 * g);
      const __m512i bit = _mm512_set1_epi8(char(1 << (4 * h + g)));
      __m512i p[RX][NP];
      zero(p);
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        __m512i w[NP];
#pragma GCC unroll 8
        for (int c = 0; c < NP; ++c) {
          const __m512i v = _mm512_load_si512(reinterpret_cast<const void*>(qg + c * pb + k * kPanelGroupBytes));
          const __m512i hv = _mm512_load_si512(reinterpret_cast<const void*>(hg + c * pb + k * kPanelGroupBytes));
          const __m512i lo = _mm512_and_si512(_mm512_srl_epi16(v, count), m3);
          w[c] = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(hv, bit), lo, four);
        }
#pragma GCC unroll 8
        for (int i = 0; i < RX; ++i) {
          int32_t xq;
          std::memcpy(&xq, xr[i][b].qs + 16 * sub + 4 * k, 4);
          const __m512i xv = _mm512_set1_epi32(xq);
#pragma GCC unroll 8
          for (int c = 0; c < NP; ++c) p[i][c] = _mm512_dpbusd_epi32(p[i][c], w[c], xv);
        }
      }
      add_signed_sub<RX, NP>(p, 4, sc, pb, sub, xr, b, tsum);
    }
    add_super_block<RX, NP>(tsum, sc, pb, xr, b, acc);
  }
  store_tile<RX, NP>(acc, ncol, y, ys);
}

// ---- Q6_K: q = ql nibble | qh 2 bits << 4 (unsigned 0..63); per sub-block of 16 (4 groups) the
// exact dot minus 32·Σx, times the row's int8 scale, summed in int32 over the super-block. ----
template <int RX, int NP>
void tile_q6_k_fixed(int64_t nb, const uint8_t* panels, int64_t, int64_t, int ncol,
                     const uint8_t* x, int64_t xs, float* y, int64_t ys) {
  constexpr int64_t kQC = kQ6_KPairs.quant, kSC = kQ6_KPairs.scale;
  __m512 acc[RX][NP];
  zero(acc);
  const quant::BlockQ8_K* xr[RX];
  row_pointers(x, xs, xr);
  const __m512i m4 = _mm512_set1_epi8(15);
  const __m512i m3 = _mm512_set1_epi8(3);

  for (int64_t b = 0; b < nb; ++b) {
    // Panels in pairs (qpanels.h): panel c's quants at q + c·kQC, its scales at sc + c·kSC.
    const uint8_t* q = kQ6_KPairs.quants(panels, b, 0);
    const uint8_t* sc = kQ6_KPairs.scales(panels, b, 0);
    __m512i tsum[RX][NP];
    zero(tsum);
#pragma GCC unroll 1
    for (int hk = 0; hk < 8; ++hk) {  // half h = hk / 4, quarter k = hk % 4: 32 elements
      const int h = hk / 4, k = hk % 4;
      const uint8_t* ql = q + (16 * h + 8 * (k % 2)) * kPanelGroupBytes;
      const uint8_t* qh = q + (32 + 8 * h) * kPanelGroupBytes;
#pragma GCC unroll 2
      for (int half = 0; half < 2; ++half) {  // sub-block 8h + 2k + half: l' = 4·half .. 4·half+3
        const int sub = 8 * h + 2 * k + half;
        __m512i p[RX][NP];
        zero(p);
#pragma GCC unroll 4
        for (int g = 4 * half; g < 4 * half + 4; ++g) {
          __m512i w[NP];
#pragma GCC unroll 8
          for (int c = 0; c < NP; ++c) {
            const __m512i lv = _mm512_load_si512(reinterpret_cast<const void*>(ql + c * kQC + g * kPanelGroupBytes));
            const __m512i hv = _mm512_load_si512(reinterpret_cast<const void*>(qh + c * kQC + g * kPanelGroupBytes));
            const __m512i lo = _mm512_and_si512(k / 2 ? _mm512_srli_epi16(lv, 4) : lv, m4);
            const __m512i hi = _mm512_and_si512(_mm512_srl_epi16(hv, _mm_cvtsi32_si128(2 * k)), m3);
            w[c] = _mm512_or_si512(lo, _mm512_slli_epi16(hi, 4));
          }
#pragma GCC unroll 8
          for (int i = 0; i < RX; ++i) {
            int32_t xq;
            std::memcpy(&xq, xr[i][b].qs + 128 * h + 32 * k + 4 * g, 4);
            const __m512i xv = _mm512_set1_epi32(xq);
#pragma GCC unroll 8
            for (int c = 0; c < NP; ++c) p[i][c] = _mm512_dpbusd_epi32(p[i][c], w[c], xv);
          }
        }
        add_signed_sub<RX, NP>(p, 32, sc, kSC, sub, xr, b, tsum);
      }
    }
    add_super_block<RX, NP>(tsum, sc, kSC, xr, b, acc);
  }
  store_tile<RX, NP>(acc, ncol, y, ys);
}

// Q6_K with one activation row (decode): the same integer sums as tile_q6_k_fixed<1, NP>, with each
// ql group loaded once for its two nibbles and each qh group once for its four bit pairs. Block by
// block, panel by panel: a panel's block is read whole before its pair partner's, so the loads run
// over three places at a time (two ql groups and a qh group) rather than six, and the blocks ahead
// are asked for into L2 (prefetcht1). In-process A/B of a decode's matmuls on the development VM
// (docs/ops.md, "seventh session"): panel by panel × 1.12–1.19 against both panels' groups
// interleaved, then the L2 hint × 1.13–1.60 against prefetcht0 (which the interleaved order had
// wanted: × 0.87–1.00 with t1). Within a panel's block: half h, then the 4 groups l' of one half
// of a quarter; the four quarters k share the loads, so four sub-blocks (8h + 2k + half) accumulate
// at once (int32 sums are exact, so the order of the sub-blocks does not matter). q = (ql nibble) |
// (qh bits at 4..5) is one vpternlogd (a | (b & 0x30)) after a 16-bit shift, which moves bits within
// each byte for shifts up to 4.
//
// The int32 sum t of one panel's block (qpanels.h, "Q6_K"), whose quants are at `g` and int8
// sub-block scales at `sc` (sc[sub][row]); `ahead` and `again` are the panel's shares of the block
// after next (null past the next tile) and of the next block, each asked for into L2 in four parts
// of `part` bytes; zero_sums: the block's 32·Σx per sub-block (q6_k_zero_sums).
inline __m512i q6_k_panel_block(const uint8_t* g, const uint8_t* sc, const quant::BlockQ8_K& xb,
                                 const int32_t (&zero_sums)[16], const uint8_t* ahead, const uint8_t* again,
                                 int64_t part) {
  const __m512i m4 = _mm512_set1_epi8(15);
  const __m512i m30 = _mm512_set1_epi8(0x30);
  constexpr int kAOrBAndC = 0xF8;  // vpternlogd truth table of a | (b & c)
  __m512i t = _mm512_setzero_si512();
#pragma GCC unroll 1
  for (int hh = 0; hh < 4; ++hh) {  // half h = hh / 2; half of each quarter = hh % 2 (l' = 4·half ..)
    const int h = hh / 2, half = hh % 2;
    if (ahead) prefetch_bytes<PrefetchInto::kL2>(ahead + hh * part, part);
    prefetch_bytes<PrefetchInto::kL2>(again + hh * part, part);
    __m512i p[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) p[k] = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int li = 0; li < 4; ++li) {  // constant bounds: GCC unrolls it (registers, not moves, carry p)
      const int l = 4 * half + li;
      const __m512i a = _mm512_load_si512(reinterpret_cast<const void*>(g + (16 * h + l) * kPanelGroupBytes));
      const __m512i bq = _mm512_load_si512(reinterpret_cast<const void*>(g + (16 * h + 8 + l) * kPanelGroupBytes));
      const __m512i hq = _mm512_load_si512(reinterpret_cast<const void*>(g + (32 + 8 * h + l) * kPanelGroupBytes));
      const __m512i w[4] = {
          _mm512_ternarylogic_epi32(_mm512_and_si512(a, m4), _mm512_slli_epi16(hq, 4), m30, kAOrBAndC),
          _mm512_ternarylogic_epi32(_mm512_and_si512(bq, m4), _mm512_slli_epi16(hq, 2), m30, kAOrBAndC),
          _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(a, 4), m4), hq, m30, kAOrBAndC),
          _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(bq, 4), m4), _mm512_srli_epi16(hq, 2), m30,
                                    kAOrBAndC)};
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        int32_t v;
        std::memcpy(&v, xb.qs + 128 * h + 32 * k + 4 * l, 4);
        p[k] = _mm512_dpbusd_epi32(p[k], w[k], _mm512_set1_epi32(v));
      }
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const int sub = 8 * h + 2 * k + half;
      const __m512i scv = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc + 16 * sub)));
      t = _mm512_add_epi32(t, _mm512_mullo_epi32(_mm512_sub_epi32(p[k], _mm512_set1_epi32(zero_sums[sub])), scv));
    }
  }
  return t;
}

template <int NP>
void tile_q6_k_one_row(int64_t nb, const uint8_t* panels, int64_t pb, int64_t, int ncol, const uint8_t* x,
                       float* y) {
  __m512 acc[1][NP];
  zero(acc);
  const auto* xb = reinterpret_cast<const quant::BlockQ8_K*>(x);
  constexpr int64_t kQC = kQ6_KPairs.quant, kSC = kQ6_KPairs.scale, kPart = kQ6_KPairs.block() / (4 * NP);
  for (int64_t b = 0; b < nb; ++b) {
    // Panels in pairs (qpanels.h): panel c's quants at q + c·kQC, its scales at sc + c·kSC. The block
    // after next and, a second time, the next block (past the pair's last: the next pair's, the next
    // tile's) are asked for in 4·NP parts each — the second request as Q8_0's kAgain (tile_pair32).
    // A whole Q6_K decode in-process × 1.15–1.18 with the two threads sharing a core's arithmetic,
    // × 0.96–1.00 with cores of their own, against the next block asked for once; three blocks ahead
    // and the next again × 1.14 / 0.99 (docs/ops.md, "tenth session").
    const uint8_t* q = kQ6_KPairs.quants(panels, b, 0);
    const uint8_t* sc = kQ6_KPairs.scales(panels, b, 0);
    const uint8_t* ahead = pair_block_ahead(panels, 2 * pb, kQ6_KPairs.block(), nb, b + 2);
    const uint8_t* again = pair_block_ahead(panels, 2 * pb, kQ6_KPairs.block(), nb, b + 1);  // never null
    int32_t zero_sums[16];
    q6_k_zero_sums(xb[b], zero_sums);
#pragma GCC unroll 1
    for (int c = 0; c < NP; ++c) {
      const __m512i t = q6_k_panel_block(q + c * kQC, sc + c * kSC + 32, xb[b], zero_sums,
                                         ahead ? ahead + 4 * c * kPart : nullptr, again + 4 * c * kPart, kPart);
      const __m512 d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc + c * kSC)));
      acc[0][c] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(xb[b].d)), _mm512_cvtepi32_ps(t), acc[0][c]);
    }
  }
  store_tile<1, NP>(acc, ncol, y, 0);
}

// ---- IQ4_XS: the nibbles index the grid + 128 (vpshufb); per sub-block of 32 (groups 4j .. 4j+3:
// low nibbles elements 4g.., high nibbles 16+4g..) the exact dot minus 128·Σx, times the row's
// sub-block scale l_j (int8), summed in int32 over the super-block. ----
template <int RX, int NP>
void tile_iq4_xs_fixed(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol,
                       const uint8_t* x, int64_t xs, float* y, int64_t ys) {
  __m512 acc[RX][NP];
  zero(acc);
  const quant::BlockQ8_K* xr[RX];
  row_pointers(x, xs, xr);
  const __m512i m4 = _mm512_set1_epi8(15), grid = grid_table_u8();

  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = panels + sb + b * kPanelQ4KQuantBytes;
    // The block blocks_ahead() on, and the next one again, as the Q4_K tile (× 1.03–1.04 in-process).
    NextBlock next{}, again{};
    if (RX == 1) {
      next = next_block<NP>(panels, pb, sb, b, nb, kPanelQ4KQuantBytes, kPanelIQ4XSScaleBytes,
                            blocks_ahead(kPanelQ4KQuantBytes));
      again = next_block<NP>(panels, pb, sb, b, nb, kPanelQ4KQuantBytes, kPanelIQ4XSScaleBytes, 1);
    }
    const uint8_t* sc = panels + b * kPanelIQ4XSScaleBytes;
    __m512i t[RX][NP];
    zero(t);
    int32_t zero_sums[RX][8];
#pragma GCC unroll 8
    for (int i = 0; i < RX; ++i) iq4_xs_zero_sums(xr[i][b], zero_sums[i]);
#pragma GCC unroll 1
    for (int j = 0; j < 8; ++j) {
      if (RX == 1) {
        prefetch_part<NP>(next, pb, kPanelQ4KQuantBytes, j, 8);
        prefetch_part<NP>(again, pb, kPanelQ4KQuantBytes, j, 8);
      }
      __m512i p[RX][NP];
      zero(p);
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        __m512i lo[NP], hi[NP];
#pragma GCC unroll 8
        for (int c = 0; c < NP; ++c) {
          const __m512i v =
              _mm512_load_si512(reinterpret_cast<const void*>(q + c * pb + (4 * j + g) * kPanelGroupBytes));
          lo[c] = _mm512_shuffle_epi8(grid, _mm512_and_si512(v, m4));
          hi[c] = _mm512_shuffle_epi8(grid, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
        }
#pragma GCC unroll 8
        for (int i = 0; i < RX; ++i) {
          int32_t xl, xh;
          std::memcpy(&xl, xr[i][b].qs + 32 * j + 4 * g, 4);
          std::memcpy(&xh, xr[i][b].qs + 32 * j + 16 + 4 * g, 4);
          const __m512i vl = _mm512_set1_epi32(xl), vh = _mm512_set1_epi32(xh);
#pragma GCC unroll 8
          for (int c = 0; c < NP; ++c) p[i][c] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(p[i][c], lo[c], vl), hi[c], vh);
        }
      }
#pragma GCC unroll 8
      for (int c = 0; c < NP; ++c) {
        const __m512i lv = _mm512_cvtepi8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(sc + c * pb + 32 + 16 * j)));
#pragma GCC unroll 8
        for (int i = 0; i < RX; ++i)
          t[i][c] = _mm512_add_epi32(
              t[i][c], _mm512_mullo_epi32(_mm512_sub_epi32(p[i][c], _mm512_set1_epi32(zero_sums[i][j])), lv));
      }
    }
    add_super_block<RX, NP>(t, sc, pb, xr, b, acc);
  }
  store_tile<RX, NP>(acc, ncol, y, ys);
}

// The kernels of one type as Tile<RX, NP>::run, for dispatch.
template <int RX, int NP>
struct Q8_0Tile {
  static void run(int64_t nb, const uint8_t* p, int64_t pb, int64_t, int ncol, const uint8_t* x, int64_t xs,
                  float* y, int64_t ys) {
    tile_pair32<false, RX, NP>(nb, p, pb, ncol, x, xs, y, ys);
  }
};
template <int RX, int NP>
struct Q4_0Tile {
  static void run(int64_t nb, const uint8_t* p, int64_t pb, int64_t, int ncol, const uint8_t* x, int64_t xs,
                  float* y, int64_t ys) {
    tile_pair32<true, RX, NP>(nb, p, pb, ncol, x, xs, y, ys);
  }
};
template <int RX, int NP>
struct IQ4_NLTile {
  static void run(int64_t nb, const uint8_t* p, int64_t pb, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
                  float* y, int64_t ys) {
    tile_iq4_nl<RX, NP>(nb, p, pb, sb, ncol, x, xs, y, ys);
  }
};
template <int RX, int NP>
struct IQ4_XSTile {
  static void run(int64_t nb, const uint8_t* p, int64_t pb, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
                  float* y, int64_t ys) {
    tile_iq4_xs_fixed<RX, NP>(nb, p, pb, sb, ncol, x, xs, y, ys);
  }
};
template <bool Q5>  // Q4_K (false) or Q5_K (true)
struct Q45_KTile {
  template <int RX, int NP>
  struct Tile {
    static void run(int64_t nb, const uint8_t* p, int64_t pb, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
                    float* y, int64_t ys) {
      tile_q45_k_fixed<Q5, RX, NP>(nb, p, pb, sb, ncol, x, xs, y, ys);
    }
  };
};
template <int RX, int NP>
struct Q6_KTile {
  static void run(int64_t nb, const uint8_t* p, int64_t pb, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
                  float* y, int64_t ys) {
    if constexpr (RX == 1)
      tile_q6_k_one_row<NP>(nb, p, pb, sb, ncol, x, y);
    else
      tile_q6_k_fixed<RX, NP>(nb, p, pb, sb, ncol, x, xs, y, ys);
  }
};

template <int RX, int NP>
struct Q2_KTile {
  static void run(int64_t nb, const uint8_t* p, int64_t pb, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
                  float* y, int64_t ys) {
    tile_q2_k_fixed<RX, NP>(nb, p, pb, sb, ncol, x, xs, y, ys);
  }
};
template <int RX, int NP>
struct Q3_KTile {
  static void run(int64_t nb, const uint8_t* p, int64_t pb, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
                  float* y, int64_t ys) {
    tile_q3_k_fixed<RX, NP>(nb, p, pb, sb, ncol, x, xs, y, ys);
  }
};
template <Legacy T>
struct LegacyTile {
  template <int RX, int NP>
  struct Tile {
    static void run(int64_t nb, const uint8_t* p, int64_t pb, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
                    float* y, int64_t ys) {
      tile_legacy<T, RX, NP>(nb, p, pb, sb, ncol, x, xs, y, ys);
    }
  };
};

// A PanelTileFn: the fixed-size kernel for nx activation rows (1..4) and np panels (1..2).
template <template <int, int> class Tile>
void dispatch(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int np, int ncol,
              const uint8_t* x, int64_t xs, int nx, float* y, int64_t ys) {
  static_assert(kPanelTileX == 4 && kPanelTileMax == 2);
  const auto rows = [&]<int RX>() {
    if (np == 2)
      Tile<RX, 2>::run(nb, panels, pb, sb, ncol, x, xs, y, ys);
    else
      Tile<RX, 1>::run(nb, panels, pb, sb, ncol, x, xs, y, ys);
  };
  switch (nx) {
    case 4: rows.template operator()<4>(); break;
    case 3: rows.template operator()<3>(); break;
    case 2: rows.template operator()<2>(); break;
    default: rows.template operator()<1>(); break;
  }
}

// A PanelTileFn over two consecutive Q8_0 tiles (qpanels_two_tiles.h: np 3 or 4, nx 1). Q4_0 has
// none: its one stream, asked for every fourth line, measured × 0.85–0.95 walked two at a time.
void two_tiles_q8_0(int64_t nb, const uint8_t* panels, int64_t pb, int64_t, int, int ncol, const uint8_t* x,
                    int64_t xs, int, float* y, int64_t ys) {
  tile_pair32<false, 1, 2, 2>(nb, panels, pb, ncol, x, xs, y, ys);
}

const PanelKernels kTwoTiles = {.q8_0 = two_tiles_q8_0};

const PanelKernels kTable = {dispatch<Q8_0Tile>,
                             dispatch<Q4_0Tile>,
                             dispatch<Q45_KTile<false>::Tile>,
                             dispatch<Q6_KTile>,
                             dispatch<Q45_KTile<true>::Tile>,
                             dispatch<IQ4_NLTile>,
                             dispatch<IQ4_XSTile>,
                             dispatch<LegacyTile<Legacy::kQ4_1>::Tile>,
                             dispatch<LegacyTile<Legacy::kQ5_0>::Tile>,
                             dispatch<LegacyTile<Legacy::kQ5_1>::Tile>,
                             dispatch<Q2_KTile>,
                             dispatch<Q3_KTile>};

}  // namespace

const PanelKernels* panel_kernels_avx512vnni() { return &kTable; }
const PanelKernels* panel_two_tiles_avx512vnni() { return &kTwoTiles; }

}  // namespace ork::ops
#pragma GCC diagnostic pop
#pragma GCC pop_options
#else
namespace ork::ops {
const PanelKernels* panel_kernels_avx512vnni() { return nullptr; }
const PanelKernels* panel_two_tiles_avx512vnni() { return nullptr; }
}  // namespace ork::ops
#endif
