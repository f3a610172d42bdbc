// The Isa::kAvx2 panel kernels of qpanels.h (every panel type): the panel's 64-byte group vectors
// read as two 256-bit halves (rows 0..7 and 8..15), vpmaddubsw of the unsigned quants (Q4_K nibbles
// 0..15, Q5_K values 0..31, Q6_K values 0..63, Q2_K / Q3_K values 0..3 / 0..7) against four broadcast activation bytes (|x| <= 127), vpmaddwd of the
// int16 pair sums with the sub-block scales. Every intermediate is exact:
//   Q4_K: one vpmaddubsw lane is 2 products of at most 15·127; eight groups (a sub-block of 32)
//         summed in int16 stay below 8·2·15·127 = 30480 < 2^15, then × the 6-bit scale in int32.
//   Q5_K: as Q4_K with half a sub-block (4 groups) per int16 sum: 4·2·31·127 = 31496.
//   Q6_K: one lane is at most 2·63·127 = 16002; two groups summed stay below 2^15, then × the int8
//         scale in int32; Σ_s sc_s·32·Σx_s is subtracted as 32·Σ_s sc_s·Σx_s (vpmaddwd, exact).
// So the integer sums equal the reference's (int32 arithmetic is exact here, whatever the order),
// and the f32 operations per super-block are the reference's: one multiply of the scales and one
// or two FMAs per output. vpmaddubsw saturates only above 2^15, which these ranges never reach.
// Signed weights (Q8_0's quants: the panel's quant + 128 could reach 2·255·127; the IQ4 grid values)
// take the sign trick instead, vpmaddubsw(|w|, sign(x, w)): below.
#include "ops/qpanels.h"
#include "ops/prefetch.h"

#include "quant/blocks.h"

#include <cstring>

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include <immintrin.h>

namespace ork::ops {
namespace {

inline __m256i load_half(const uint8_t* p) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
}
// 8 bytes (one per row) → int16 lanes [v0, v0, v1, v1, …, v7, v7]: a row's scale for both int16
// pair sums of its 4-byte group.
inline __m256i dup_u8(const uint8_t* p) {
  const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(v, v));
}
inline __m256i dup_i8(const uint8_t* p) {
  const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(v, v));
}
// Rows' bytes of two sub-blocks a, b (8 each) → int16 lanes [a0, b0, a1, b1, …]: for vpmaddwd
// against a broadcast (Σx_a, Σx_b) pair.
inline __m256i pair_u8(const uint8_t* a, const uint8_t* b) {
  const __m128i va = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(a));
  const __m128i vb = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b));
  return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(va, vb));
}
inline __m256i pair_i8(const uint8_t* a, const uint8_t* b) {
  const __m128i va = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(a));
  const __m128i vb = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b));
  return _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(va, vb));
}
inline __m256i set_pair(int32_t a, int32_t b) {
  return _mm256_set1_epi32(int32_t(uint32_t(uint16_t(int16_t(a))) | (uint32_t(uint16_t(int16_t(b))) << 16)));
}
// The rows' int8 scales of sub-blocks 2j, 2j+1 (16 bytes apart, 8 rows each from `sh`) as pair_i8
// lanes, j < 8: for scaled_bsums.
inline void pair_scales_i8(const uint8_t* sh, __m256i (&sp)[8]) {
  for (int j = 0; j < 8; ++j) sp[j] = pair_i8(sh + 16 * (2 * j), sh + 16 * (2 * j + 1));
}
// Σ_s sc_s·Σx_s per row (int32, exact: vpmaddwd of int8 scales by int16 sums) for one activation
// row's 16 sums `bs`, from pair_scales_i8's pairs.
inline __m256i scaled_bsums(const __m256i (&sp)[8], const int16_t* bs) {
  __m256i sum = _mm256_setzero_si256();
  for (int j = 0; j < 8; ++j) sum = _mm256_add_epi32(sum, _mm256_madd_epi16(sp[j], set_pair(bs[2 * j], bs[2 * j + 1])));
  return sum;
}
inline __m256i bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}
// The 8 f16 scales of a half (rows 8·hh ..), times the activation scale.
inline __m256 half_scale(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
}

// Writes the ncol first columns of a tile: acc[i][h] holds rows 8h .. 8h+7 of the tile's panels.
template <int RX, int H>
inline void store_tile(const __m256 (&acc)[RX][H], int ncol, float* y, int64_t ys) {
#pragma GCC unroll 4
  for (int i = 0; i < RX; ++i)
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h) {
      const int valid = ncol - 8 * h;
      if (valid >= 8) {
        _mm256_storeu_ps(y + i * ys + 8 * h, acc[i][h]);
      } else if (valid > 0) {
        alignas(32) float t[8];
        _mm256_store_ps(t, acc[i][h]);
        std::memcpy(y + i * ys + 8 * h, t, size_t(valid) * sizeof(float));
      }
    }
}

// Half h of a tile of NP panels: panel h / 2, rows 8·(h % 2) ..
inline int64_t half_offset(int h, int64_t pb) { return (h / 2) * pb + (h % 2) * 32; }
inline int64_t half_rows(int h, int64_t pb) { return (h / 2) * pb + (h % 2) * 8; }

// ---- Q4_K and Q5_K (Q5 adds a 5th bit from the qh groups: bit `sub` of qh group g) ----
template <bool Q5, int RX, int NP>
void tile_q45_k(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol, const uint8_t* x,
                int64_t xs, float* y, int64_t ys) {
  constexpr int H = 2 * NP;
  // Groups summed in int16 before vpmaddwd: 8·2·15·127 = 30480 (Q4_K), 4·2·31·127 = 31496 (Q5_K).
  constexpr int kRun = Q5 ? 4 : 8;
  constexpr int64_t kQuantBytes = Q5 ? kPanelQ5KQuantBytes : kPanelQ4KQuantBytes;
  __m256 acc[RX][H];
  for (auto& a : acc)
    for (auto& v : a) v = _mm256_setzero_ps();
  const quant::BlockQ8_K* xr[RX];
  for (int i = 0; i < RX; ++i) xr[i] = reinterpret_cast<const quant::BlockQ8_K*>(x + i * xs);
  const __m256i m4 = _mm256_set1_epi8(15), m10 = _mm256_set1_epi8(0x10);

  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = panels + sb + b * kQuantBytes;
    const uint8_t* s = panels + b * kPanelQ4KScaleBytes;
    NextBlock next{};
    if (RX == 1)
      next = next_block<NP>(panels, pb, sb, b, nb, kQuantBytes, kPanelQ4KScaleBytes, blocks_ahead(kQuantBytes));
    __m256i isum[RX][H];
    for (auto& a : isum)
      for (auto& v : a) v = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int sub = 0; sub < 8; ++sub) {
      if (RX == 1) prefetch_part<NP>(next, pb, kQuantBytes, sub, 8);
      const uint8_t* qj = q + (sub / 2) * 8 * kPanelGroupBytes;
      const uint8_t* qh = q + 32 * kPanelGroupBytes;
      const int shift = (sub % 2) * 4;
      const __m128i hcount = _mm_cvtsi32_si128(sub);
      __m256i scv[H];
#pragma GCC unroll 4
      for (int h = 0; h < H; ++h) scv[h] = dup_u8(s + half_rows(h, pb) + 64 + 16 * sub);
#pragma GCC unroll 2
      for (int g0 = 0; g0 < 8; g0 += kRun) {
        __m256i p[RX][H];
        for (auto& a : p)
          for (auto& v : a) v = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int g = g0; g < g0 + kRun; ++g) {
          __m256i xv[RX];
#pragma GCC unroll 4
          for (int i = 0; i < RX; ++i) xv[i] = bcast4(xr[i][b].qs + 32 * sub + 4 * g);
#pragma GCC unroll 4
          for (int h = 0; h < H; ++h) {
            const int64_t o = half_offset(h, pb) + g * kPanelGroupBytes;
            __m256i w = _mm256_and_si256(_mm256_srli_epi16(load_half(qj + o), shift), m4);
            if constexpr (Q5)
              w = _mm256_or_si256(
                  w, _mm256_and_si256(_mm256_slli_epi16(_mm256_srl_epi16(load_half(qh + o), hcount), 4), m10));
#pragma GCC unroll 4
            for (int i = 0; i < RX; ++i) p[i][h] = _mm256_add_epi16(p[i][h], _mm256_maddubs_epi16(w, xv[i]));
          }
        }
#pragma GCC unroll 4
        for (int h = 0; h < H; ++h)
#pragma GCC unroll 4
          for (int i = 0; i < RX; ++i) isum[i][h] = _mm256_add_epi32(isum[i][h], _mm256_madd_epi16(p[i][h], scv[h]));
      }
    }
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h) {
      const uint8_t* sh = s + half_rows(h, pb);
      const __m256 d = half_scale(s + (h / 2) * pb + 2 * 8 * (h % 2));
      const __m256 dmin = half_scale(s + (h / 2) * pb + 32 + 2 * 8 * (h % 2));
      __m256i mp[4];
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) mp[j] = pair_u8(sh + 192 + 16 * (2 * j), sh + 192 + 16 * (2 * j + 1));
#pragma GCC unroll 4
      for (int i = 0; i < RX; ++i) {
        const int16_t* bs = xr[i][b].bsums;
        __m256i msum = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j)
          msum = _mm256_add_epi32(msum, _mm256_madd_epi16(mp[j], set_pair(bs[4 * j] + bs[4 * j + 1],
                                                                            bs[4 * j + 2] + bs[4 * j + 3])));
        const __m256 dx = _mm256_set1_ps(xr[i][b].d);
        acc[i][h] = _mm256_fmadd_ps(_mm256_mul_ps(d, dx), _mm256_cvtepi32_ps(isum[i][h]), acc[i][h]);
        acc[i][h] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, dx), _mm256_cvtepi32_ps(msum), acc[i][h]);
      }
    }
  }
  store_tile<RX, H>(acc, ncol, y, ys);
}

// ---- Q6_K ----
// q (0..63) of 4 elements × 8 rows: the ql nibble (high when `high`) | the qh bit pair k << 4.
template <int K>
inline __m256i q6_weights(const uint8_t* ql, const uint8_t* qh, bool high, __m256i m4, __m256i m30) {
  const __m256i lv = load_half(ql), hv = load_half(qh);
  const __m256i lo = _mm256_and_si256(high ? _mm256_srli_epi16(lv, 4) : lv, m4);
  const __m256i hs = K <= 2 ? _mm256_slli_epi16(hv, 4 - 2 * K) : _mm256_srli_epi16(hv, 2 * K - 4);
  return _mm256_or_si256(lo, _mm256_and_si256(hs, m30));
}

template <int RX, int NP, int K>
inline void q6_quarter(const uint8_t* q, int hh, int64_t qc, int64_t sc, const uint8_t* s,
                       const quant::BlockQ8_K* const (&xr)[RX], int64_t b, __m256i (&tsum)[RX][2 * NP],
                       __m256i m4, __m256i m30) {
  constexpr int H = 2 * NP;
  const uint8_t* ql = q + (16 * hh + 8 * (K % 2)) * kPanelGroupBytes;
  const uint8_t* qh = q + (32 + 8 * hh) * kPanelGroupBytes;
#pragma GCC unroll 2
  for (int half = 0; half < 2; ++half) {  // sub-block 8·hh + 2K + half: groups 4·half .. 4·half + 3
    const int sub = 8 * hh + 2 * K + half;
#pragma GCC unroll 2
    for (int gp = 0; gp < 2; ++gp) {  // two groups summed in int16
      const int g = 4 * half + 2 * gp;
      const int e = 128 * hh + 32 * K + 4 * g;
      __m256i xa[RX], xb[RX];
#pragma GCC unroll 4
      for (int i = 0; i < RX; ++i) {
        xa[i] = bcast4(xr[i][b].qs + e);
        xb[i] = bcast4(xr[i][b].qs + e + 4);
      }
#pragma GCC unroll 4
      for (int h = 0; h < H; ++h) {
        const int64_t o = half_offset(h, qc) + g * kPanelGroupBytes;
        const __m256i wa = q6_weights<K>(ql + o, qh + o, K >= 2, m4, m30);
        const __m256i wb = q6_weights<K>(ql + o + kPanelGroupBytes, qh + o + kPanelGroupBytes, K >= 2, m4, m30);
        const __m256i scv = dup_i8(s + half_rows(h, sc) + 32 + 16 * sub);
#pragma GCC unroll 4
        for (int i = 0; i < RX; ++i) {
          const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(wa, xa[i]), _mm256_maddubs_epi16(wb, xb[i]));
          tsum[i][h] = _mm256_add_epi32(tsum[i][h], _mm256_madd_epi16(p, scv));
        }
      }
    }
  }
}

template <int RX, int NP>
void tile_q6_k(int64_t nb, const uint8_t* panels, int64_t, int64_t sb, int ncol, const uint8_t* x,
               int64_t xs, float* y, int64_t ys) {
  constexpr int H = 2 * NP;
  __m256 acc[RX][H];
  for (auto& a : acc)
    for (auto& v : a) v = _mm256_setzero_ps();
  const quant::BlockQ8_K* xr[RX];
  for (int i = 0; i < RX; ++i) xr[i] = reinterpret_cast<const quant::BlockQ8_K*>(x + i * xs);
  const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);

  // Panels in pairs (qpanels.h): `panels` is the pair, `sb` the index in it of the tile's first panel.
  constexpr int64_t kQC = kQ6_KPairs.quant, kSC = kQ6_KPairs.scale;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = kQ6_KPairs.quants(panels, b, int(sb));
    const uint8_t* s = kQ6_KPairs.scales(panels, b, int(sb));
    __m256i tsum[RX][H];
    for (auto& a : tsum)
      for (auto& v : a) v = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int hh = 0; hh < 2; ++hh) {
      q6_quarter<RX, NP, 0>(q, hh, kQC, kSC, s, xr, b, tsum, m4, m30);
      q6_quarter<RX, NP, 1>(q, hh, kQC, kSC, s, xr, b, tsum, m4, m30);
      q6_quarter<RX, NP, 2>(q, hh, kQC, kSC, s, xr, b, tsum, m4, m30);
      q6_quarter<RX, NP, 3>(q, hh, kQC, kSC, s, xr, b, tsum, m4, m30);
    }
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h) {
      const uint8_t* sh = s + half_rows(h, kSC) + 32;
      const __m256 d = half_scale(s + (h / 2) * kSC + 2 * 8 * (h % 2));
      __m256i sp[8];
      pair_scales_i8(sh, sp);
#pragma GCC unroll 4
      for (int i = 0; i < RX; ++i) {
        const __m256i t = _mm256_sub_epi32(tsum[i][h], _mm256_slli_epi32(scaled_bsums(sp, xr[i][b].bsums), 5));
        acc[i][h] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(xr[i][b].d)), _mm256_cvtepi32_ps(t),
                                    acc[i][h]);
      }
    }
  }
  store_tile<RX, H>(acc, ncol, y, ys);
}

// One activation row (decode): half by half of the tile (8 rows), the next block of each panel
// prefetched, each of its ql and qh groups loaded once — qh group 8·hh + g holds the high bits of
// quarters 0..3, ql groups 16·hh + g and 16·hh + 8 + g the low bits of quarters 0, 2 and 1, 3 — so
// a 256-bit load feeds four (qh) or two (ql) weight vectors, and the few live vectors stay in
// registers. The integer sums and the f32 steps per output are tile_q6_k's (and the reference's).
template <int NP>
void tile_q6_k_row(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol, const uint8_t* x,
                   int64_t xs, float* y, int64_t ys) {
  (void)xs;
  constexpr int H = 2 * NP;
  __m256 acc[1][H];
  for (auto& v : acc[0]) v = _mm256_setzero_ps();
  const auto* xr = reinterpret_cast<const quant::BlockQ8_K*>(x);
  const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);

  // Panels in pairs (qpanels.h): `panels` is the pair, `sb` the index in it of the tile's first
  // panel; the next block (past the pair's last: the next pair's first) asked for in H parts.
  constexpr int64_t kQC = kQ6_KPairs.quant, kSC = kQ6_KPairs.scale, kPart = kQ6_KPairs.block() / H;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = kQ6_KPairs.quants(panels, b, int(sb));
    const uint8_t* s = kQ6_KPairs.scales(panels, b, int(sb));
    const int8_t* xq = xr[b].qs;
    const uint8_t* next = pair_block_ahead(panels, 2 * pb, kQ6_KPairs.block(), nb, b + 1);  // never null
#pragma GCC unroll 1
    for (int h = 0; h < H; ++h) {
      const uint8_t* qh0 = q + half_offset(h, kQC);
      const uint8_t* sh = s + half_rows(h, kSC) + 32;  // sc[sub][row]
      prefetch_bytes(next + h * kPart, kPart);
      __m256i t = _mm256_setzero_si256();
#pragma GCC unroll 2
      for (int hh = 0; hh < 2; ++hh)
#pragma GCC unroll 4
        for (int gp = 0; gp < 4; ++gp) {  // groups g = 2·gp, 2·gp + 1: one sub-block per quarter
          __m256i p[4];
#pragma GCC unroll 2
          for (int u = 0; u < 2; ++u) {
            const int g = 2 * gp + u;
            const __m256i va = load_half(qh0 + (16 * hh + g) * kPanelGroupBytes);      // quarters 0, 2
            const __m256i vb = load_half(qh0 + (16 * hh + 8 + g) * kPanelGroupBytes);  // quarters 1, 3
            const __m256i vh = load_half(qh0 + (32 + 8 * hh + g) * kPanelGroupBytes);
            const __m256i w[4] = {
                _mm256_or_si256(_mm256_and_si256(va, m4), _mm256_and_si256(_mm256_slli_epi16(vh, 4), m30)),
                _mm256_or_si256(_mm256_and_si256(vb, m4), _mm256_and_si256(_mm256_slli_epi16(vh, 2), m30)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(va, 4), m4), _mm256_and_si256(vh, m30)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(vb, 4), m4),
                                _mm256_and_si256(_mm256_srli_epi16(vh, 2), m30))};
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k) {
              const __m256i d = _mm256_maddubs_epi16(w[k], bcast4(xq + 128 * hh + 32 * k + 4 * g));
              p[k] = u == 0 ? d : _mm256_add_epi16(p[k], d);  // two groups: at most 2·16002 < 2^15
            }
          }
#pragma GCC unroll 4
          for (int k = 0; k < 4; ++k)
            t = _mm256_add_epi32(t, _mm256_madd_epi16(p[k], dup_i8(sh + 16 * (8 * hh + 2 * k + gp / 2))));
        }
      const __m256 d = half_scale(s + (h / 2) * kSC + 2 * 8 * (h % 2));
      __m256i sp[8];
      pair_scales_i8(sh, sp);
      const __m256i corr = scaled_bsums(sp, xr[b].bsums);
      acc[0][h] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(xr[b].d)),
                                  _mm256_cvtepi32_ps(_mm256_sub_epi32(t, _mm256_slli_epi32(corr, 5))), acc[0][h]);
    }
  }
  store_tile<1, H>(acc, ncol, y, ys);
}

// ---- IQ4_NL and IQ4_XS: indices → grid values (signed bytes) by vpshufb; the signed × signed
// byte product as vpmaddubsw(|w|, sign(x, w)) (|w| <= 127, |x| <= 127: a lane is at most
// 2·127·127 = 32258, exact), then vpmaddwd by 1 (IQ4_NL) or by the sub-block scale (IQ4_XS). ----
inline __m256i grid_table() {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(quant::kIQ4NLValues)));
}
inline __m256i dot_signed(__m256i w, __m256i x) {
  return _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(x, w));
}

template <int RX, int NP>
void tile_iq4_nl(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol, const uint8_t* x,
                 int64_t xs, float* y, int64_t ys) {
  constexpr int H = 2 * NP;
  __m256 acc[RX][H];
  for (auto& a : acc)
    for (auto& v : a) v = _mm256_setzero_ps();
  const BlockQ8A* xr[RX];
  for (int i = 0; i < RX; ++i) xr[i] = reinterpret_cast<const BlockQ8A*>(x + i * xs);
  const __m256i m4 = _mm256_set1_epi8(15), grid = grid_table(), ones = _mm256_set1_epi16(1);

  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = panels + sb + b * 4 * kPanelGroupBytes;
    __m256i p[RX][H];
    for (auto& a : p)
      for (auto& v : a) v = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      __m256i xl[RX], xh[RX];
#pragma GCC unroll 4
      for (int i = 0; i < RX; ++i) {
        xl[i] = bcast4(xr[i][b].qs + 4 * g);
        xh[i] = bcast4(xr[i][b].qs + 16 + 4 * g);
      }
#pragma GCC unroll 4
      for (int h = 0; h < H; ++h) {
        const __m256i v = load_half(q + half_offset(h, pb) + g * kPanelGroupBytes);
        const __m256i wl = _mm256_shuffle_epi8(grid, _mm256_and_si256(v, m4));
        const __m256i wh = _mm256_shuffle_epi8(grid, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
#pragma GCC unroll 4
        for (int i = 0; i < RX; ++i) {
          p[i][h] = _mm256_add_epi32(p[i][h], _mm256_madd_epi16(dot_signed(wl, xl[i]), ones));
          p[i][h] = _mm256_add_epi32(p[i][h], _mm256_madd_epi16(dot_signed(wh, xh[i]), ones));
        }
      }
    }
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h) {
      const __m256 d = half_scale(panels + (h / 2) * pb + b * kPanelRows * 2 + 2 * 8 * (h % 2));
#pragma GCC unroll 4
      for (int i = 0; i < RX; ++i)
        acc[i][h] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(xr[i][b].d)), _mm256_cvtepi32_ps(p[i][h]),
                                    acc[i][h]);
    }
  }
  store_tile<RX, H>(acc, ncol, y, ys);
}

template <int RX, int NP>
void tile_iq4_xs(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol, const uint8_t* x,
                 int64_t xs, float* y, int64_t ys) {
  constexpr int H = 2 * NP;
  __m256 acc[RX][H];
  for (auto& a : acc)
    for (auto& v : a) v = _mm256_setzero_ps();
  const quant::BlockQ8_K* xr[RX];
  for (int i = 0; i < RX; ++i) xr[i] = reinterpret_cast<const quant::BlockQ8_K*>(x + i * xs);
  const __m256i m4 = _mm256_set1_epi8(15), grid = grid_table();

  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = panels + sb + b * kPanelQ4KQuantBytes;
    const uint8_t* s = panels + b * kPanelIQ4XSScaleBytes;
    __m256i t[RX][H];
    for (auto& a : t)
      for (auto& v : a) v = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int j = 0; j < 8; ++j) {
      __m256i scv[H];
#pragma GCC unroll 4
      for (int h = 0; h < H; ++h) scv[h] = dup_i8(s + half_rows(h, pb) + 32 + 16 * j);
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        __m256i xl[RX], xh[RX];
#pragma GCC unroll 4
        for (int i = 0; i < RX; ++i) {
          xl[i] = bcast4(xr[i][b].qs + 32 * j + 4 * g);
          xh[i] = bcast4(xr[i][b].qs + 32 * j + 16 + 4 * g);
        }
#pragma GCC unroll 4
        for (int h = 0; h < H; ++h) {
          const __m256i v = load_half(q + half_offset(h, pb) + (4 * j + g) * kPanelGroupBytes);
          const __m256i wl = _mm256_shuffle_epi8(grid, _mm256_and_si256(v, m4));
          const __m256i wh = _mm256_shuffle_epi8(grid, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
#pragma GCC unroll 4
          for (int i = 0; i < RX; ++i) {
            t[i][h] = _mm256_add_epi32(t[i][h], _mm256_madd_epi16(dot_signed(wl, xl[i]), scv[h]));
            t[i][h] = _mm256_add_epi32(t[i][h], _mm256_madd_epi16(dot_signed(wh, xh[i]), scv[h]));
          }
        }
      }
    }
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h) {
      const __m256 d = half_scale(s + (h / 2) * pb + 2 * 8 * (h % 2));
#pragma GCC unroll 4
      for (int i = 0; i < RX; ++i)
        acc[i][h] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(xr[i][b].d)), _mm256_cvtepi32_ps(t[i][h]),
                                    acc[i][h]);
    }
  }
  store_tile<RX, H>(acc, ncol, y, ys);
}

// ---- Q4_0, Q4_1, Q5_0, Q5_1: unsigned q (nibble, | the 5th bit at bit 4) by vpmaddubsw against
// the broadcast activation bytes; a lane is at most 2·31·127 = 7874, the low and high nibble groups
// summed in int16 15748, then vpmaddwd by 1. Q4_0 and Q5_0 subtract 8·Σx or 16·Σx (exact); Q4_1 /
// Q5_1 add the offset term m·d_x·Σx as a second FMA. ----
enum class Legacy { kQ4_0, kQ4_1, kQ5_0, kQ5_1 };

template <Legacy T, int RX, int NP>
void tile_legacy(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol, const uint8_t* x,
                 int64_t xs, float* y, int64_t ys) {
  constexpr int H = 2 * NP;
  constexpr bool kQ5 = T == Legacy::kQ5_0 || T == Legacy::kQ5_1;
  constexpr bool kOffset = T == Legacy::kQ4_1 || T == Legacy::kQ5_1;
  constexpr int32_t kZero = T == Legacy::kQ4_0 ? 8 : 16;  // the zero point of the offset-free types
  constexpr int64_t kQuantBytes = (kQ5 ? 5 : 4) * kPanelGroupBytes;
  constexpr int64_t kScaleBytes = (kOffset ? 4 : 2) * kPanelRows;
  __m256 acc[RX][H];
  for (auto& a : acc)
    for (auto& v : a) v = _mm256_setzero_ps();
  const BlockQ8A* xr[RX];
  for (int i = 0; i < RX; ++i) xr[i] = reinterpret_cast<const BlockQ8A*>(x + i * xs);
  const __m256i m4 = _mm256_set1_epi8(15), m10 = _mm256_set1_epi8(0x10), ones = _mm256_set1_epi16(1);

  // Half h's quants and scales of block b. Q4_0 (panels in pairs, qpanels.h): `panels` is the pair
  // and `sb` the index in it (0 or 1) of the tile's first panel (dispatch).
  const auto quants = [&](int64_t b, int h) {
    if constexpr (T == Legacy::kQ4_0) return kQ4_0Pairs.quants(panels, b, int(sb) + h / 2) + (h % 2) * 32;
    return panels + sb + b * kQuantBytes + half_offset(h, pb);
  };
  const auto scales = [&](int64_t b, int h) {
    if constexpr (T == Legacy::kQ4_0) return kQ4_0Pairs.scales(panels, b, int(sb) + h / 2) + 2 * 8 * (h % 2);
    return panels + (h / 2) * pb + b * kScaleBytes + 2 * 8 * (h % 2);
  };
  for (int64_t b = 0; b < nb; ++b) {
    __m256i p[RX][H];
    for (auto& a : p)
      for (auto& v : a) v = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      __m256i xl[RX], xh[RX];
#pragma GCC unroll 4
      for (int i = 0; i < RX; ++i) {
        xl[i] = bcast4(xr[i][b].qs + 4 * g);
        xh[i] = bcast4(xr[i][b].qs + 16 + 4 * g);
      }
#pragma GCC unroll 4
      for (int h = 0; h < H; ++h) {
        const __m256i v = load_half(quants(b, h) + g * kPanelGroupBytes);
        __m256i lo = _mm256_and_si256(v, m4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        if constexpr (kQ5) {  // bits g (low elements) and 4 + g (high elements) moved to bit 4
          const __m256i hv = load_half(quants(b, h) + 4 * kPanelGroupBytes);
          lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(hv, 4 - g), m10));
          hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_srli_epi16(hv, g), m10));
        }
#pragma GCC unroll 4
        for (int i = 0; i < RX; ++i)
          p[i][h] = _mm256_add_epi32(
              p[i][h], _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(lo, xl[i]),
                                                          _mm256_maddubs_epi16(hi, xh[i])),
                                         ones));
      }
    }
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h) {
      const uint8_t* sc = scales(b, h);
      const __m256 d = half_scale(sc);
#pragma GCC unroll 4
      for (int i = 0; i < RX; ++i) {
        const __m256 dx = _mm256_set1_ps(xr[i][b].d);
        __m256i pi = p[i][h];
        if constexpr (!kOffset) pi = _mm256_sub_epi32(pi, _mm256_set1_epi32(kZero * xr[i][b].sum));
        acc[i][h] = _mm256_fmadd_ps(_mm256_mul_ps(d, dx), _mm256_cvtepi32_ps(pi), acc[i][h]);
        if constexpr (kOffset)
          acc[i][h] = _mm256_fmadd_ps(_mm256_mul_ps(half_scale(sc + 2 * kPanelRows), dx),
                                      _mm256_set1_ps(float(xr[i][b].sum)), acc[i][h]);
      }
    }
  }
  store_tile<RX, H>(acc, ncol, y, ys);
}

// ---- Q8_0: the panel holds quant + 128; XOR 0x80 gives the signed quant w back, and the signed ×
// signed product is vpmaddubsw(|w|, sign(x, w)) (|w| <= 128, |x| <= 127: a lane is at most
// 2·128·127 = 32512, exact), widened to int32 by vpmaddwd before two lanes could be added. ----
template <int RX, int NP>
void tile_q8_0(int64_t nb, const uint8_t* panels, int64_t, int64_t sb, int ncol, const uint8_t* x,
               int64_t xs, float* y, int64_t ys) {
  constexpr int H = 2 * NP;
  __m256 acc[RX][H];
  for (auto& a : acc)
    for (auto& v : a) v = _mm256_setzero_ps();
  const BlockQ8A* xr[RX];
  for (int i = 0; i < RX; ++i) xr[i] = reinterpret_cast<const BlockQ8A*>(x + i * xs);
  const __m256i flip = _mm256_set1_epi8(char(0x80)), ones = _mm256_set1_epi16(1);

  // Panels in pairs (qpanels.h): `panels` is the pair, `sb` the index in it of the tile's first panel.
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = kQ8_0Pairs.quants(panels, b, int(sb));
    if (RX == 1 && b + 4 < nb) prefetch_bytes(kQ8_0Pairs.scales(panels, b + 4, 0), kQ8_0Pairs.block());
    __m256i p[RX][H];
    for (auto& a : p)
      for (auto& v : a) v = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      __m256i xv[RX];
#pragma GCC unroll 4
      for (int i = 0; i < RX; ++i) xv[i] = bcast4(xr[i][b].qs + 4 * g);
#pragma GCC unroll 4
      for (int h = 0; h < H; ++h) {
        const __m256i w = _mm256_xor_si256(load_half(q + half_offset(h, kQ8_0Pairs.quant) + g * kPanelGroupBytes), flip);
        const __m256i aw = _mm256_abs_epi8(w);
#pragma GCC unroll 4
        for (int i = 0; i < RX; ++i)
          p[i][h] = _mm256_add_epi32(
              p[i][h], _mm256_madd_epi16(_mm256_maddubs_epi16(aw, _mm256_sign_epi8(xv[i], w)), ones));
      }
    }
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h) {
      const __m256 d = half_scale(kQ8_0Pairs.scales(panels, b, int(sb) + h / 2) + 2 * 8 * (h % 2));
#pragma GCC unroll 4
      for (int i = 0; i < RX; ++i)
        acc[i][h] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(xr[i][b].d)), _mm256_cvtepi32_ps(p[i][h]),
                                    acc[i][h]);
    }
  }
  store_tile<RX, H>(acc, ncol, y, ys);
}

// ---- Q2_K and Q3_K (Q3): q = 2 bits (0..3) of the q group byte (bits 2g, 2g+1 for sub-block
// 8h + 2g + u, groups 8h + 4u + k); Q3_K adds the h group's bit 4h + g moved to bit 2 (vpcmpeqb on
// the masked bit, AND 4): 0..7. Per sub-block of 16 (4 groups) the vpmaddubsw pair sums stay at most
// 4·2·3·127 = 3048 (Q2_K) or 4·2·7·127 = 7112 (Q3_K) in int16, then vpmaddwd by the row's scale:
// Q2_K's 4-bit scale, its mins as Q4_K's over the 16 sub-blocks' bsums; Q3_K's scale − 32 (int8),
// Σ_s sc_s·4·Σx_s subtracted as 4·Σ_s sc_s·Σx_s (vpmaddwd, exact), as Q6_K's 32·. ----
template <bool Q3, int RX, int NP>
void tile_q23_k(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int ncol, const uint8_t* x,
                int64_t xs, float* y, int64_t ys) {
  constexpr int H = 2 * NP;
  constexpr int64_t kQuantBytes = Q3 ? kPanelQ3KQuantBytes : kPanelQ2KQuantBytes;
  constexpr int64_t kScaleBytes = Q3 ? kPanelQ3KScaleBytes : kPanelQ2KScaleBytes;
  __m256 acc[RX][H];
  for (auto& a : acc)
    for (auto& v : a) v = _mm256_setzero_ps();
  const quant::BlockQ8_K* xr[RX];
  for (int i = 0; i < RX; ++i) xr[i] = reinterpret_cast<const quant::BlockQ8_K*>(x + i * xs);
  const __m256i m3 = _mm256_set1_epi8(3);
  [[maybe_unused]] const __m256i four = _mm256_set1_epi8(4);

  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = panels + sb + b * kQuantBytes;
    const uint8_t* s = panels + b * kScaleBytes;
    NextBlock next{};
    if (RX == 1) next = next_block<NP>(panels, pb, sb, b, nb, kQuantBytes, kScaleBytes, blocks_ahead(kQuantBytes));
    __m256i isum[RX][H];
    for (auto& a : isum)
      for (auto& v : a) v = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int sub = 0; sub < 16; ++sub) {
      const int hb = sub / 8, g = (sub % 8) / 2, u = sub % 2;
      if (RX == 1) prefetch_part<NP>(next, pb, kQuantBytes, sub, 16);
      const uint8_t* qg = q + (8 * hb + 4 * u) * kPanelGroupBytes;
      [[maybe_unused]] const uint8_t* hg = q + (16 + 4 * u) * kPanelGroupBytes;
      const __m128i count = _mm_cvtsi32_si128(2 * g);
      [[maybe_unused]] const __m256i bit = _mm256_set1_epi8(char(1 << (4 * hb + g)));
      __m256i scv[H], p[RX][H];
#pragma GCC unroll 4
      for (int h = 0; h < H; ++h)
        scv[h] = Q3 ? dup_i8(s + half_rows(h, pb) + 32 + 16 * sub) : dup_u8(s + half_rows(h, pb) + 64 + 16 * sub);
      for (auto& a : p)
        for (auto& v : a) v = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        __m256i xv[RX];
#pragma GCC unroll 4
        for (int i = 0; i < RX; ++i) xv[i] = bcast4(xr[i][b].qs + 16 * sub + 4 * k);
#pragma GCC unroll 4
        for (int h = 0; h < H; ++h) {
          __m256i w =
              _mm256_and_si256(_mm256_srl_epi16(load_half(qg + half_offset(h, pb) + k * kPanelGroupBytes), count), m3);
          if constexpr (Q3) {
            const __m256i hv = load_half(hg + half_offset(h, pb) + k * kPanelGroupBytes);
            w = _mm256_or_si256(w, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hv, bit), bit), four));
          }
#pragma GCC unroll 4
          for (int i = 0; i < RX; ++i) p[i][h] = _mm256_add_epi16(p[i][h], _mm256_maddubs_epi16(w, xv[i]));
        }
      }
#pragma GCC unroll 4
      for (int h = 0; h < H; ++h)
#pragma GCC unroll 4
        for (int i = 0; i < RX; ++i) isum[i][h] = _mm256_add_epi32(isum[i][h], _mm256_madd_epi16(p[i][h], scv[h]));
    }
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h) {
      const uint8_t* sh = s + half_rows(h, pb);
      const __m256 d = half_scale(s + (h / 2) * pb + 2 * 8 * (h % 2));
      if constexpr (Q3) {
        __m256i sp[8];
        pair_scales_i8(sh + 32, sp);
#pragma GCC unroll 4
        for (int i = 0; i < RX; ++i) {
          const __m256i t = _mm256_sub_epi32(isum[i][h], _mm256_slli_epi32(scaled_bsums(sp, xr[i][b].bsums), 2));
          acc[i][h] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(xr[i][b].d)), _mm256_cvtepi32_ps(t), acc[i][h]);
        }
      } else {
        const __m256 dmin = half_scale(s + (h / 2) * pb + 32 + 2 * 8 * (h % 2));
#pragma GCC unroll 4
        for (int i = 0; i < RX; ++i) {
          const int16_t* bs = xr[i][b].bsums;
          __m256i msum = _mm256_setzero_si256();
#pragma GCC unroll 8
          for (int j = 0; j < 8; ++j)
            msum = _mm256_add_epi32(msum, _mm256_madd_epi16(pair_u8(sh + 320 + 16 * (2 * j), sh + 320 + 16 * (2 * j + 1)),
                                                            set_pair(bs[2 * j], bs[2 * j + 1])));
          const __m256 dx = _mm256_set1_ps(xr[i][b].d);
          acc[i][h] = _mm256_fmadd_ps(_mm256_mul_ps(d, dx), _mm256_cvtepi32_ps(isum[i][h]), acc[i][h]);
          acc[i][h] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, dx), _mm256_cvtepi32_ps(msum), acc[i][h]);
        }
      }
    }
  }
  store_tile<RX, H>(acc, ncol, y, ys);
}

using TileFn = void (*)(int64_t, const uint8_t*, int64_t, int64_t, int, const uint8_t*, int64_t, float*,
                        int64_t);

// A PanelTileFn from the (rows, panels) kernels: RX·NP <= 2 keeps a tile's accumulators in the 16
// ymm registers. One activation row takes both panels at once; more rows go two at a time, panel by
// panel. Each output is computed by the same operations whichever kernel shape covers it.
template <TileFn K11, TileFn K12, TileFn K21, bool Paired = false>
void dispatch(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int np, int ncol,
              const uint8_t* x, int64_t xs, int nx, float* y, int64_t ys) {
  // Paired types (Q8_0, Q4_0, Q6_K: panels in pairs, qpanels.h): a tile gets the pair and, as its
  // scale_bytes argument, the index in the pair of its first panel.
  if (nx == 1) {
    (np == 2 ? K12 : K11)(nb, panels, pb, Paired ? 0 : sb, ncol, x, xs, y, ys);
    return;
  }
  for (int c = 0; c < np; ++c) {
    const int nc = ncol - c * kPanelRows < kPanelRows ? ncol - c * kPanelRows : kPanelRows;
    for (int i = 0; i < nx; i += 2)
      (nx - i >= 2 ? K21 : K11)(nb, Paired ? panels : panels + c * pb, pb, Paired ? c : sb, nc, x + i * xs, xs,
                                y + i * ys + c * kPanelRows, ys);
  }
}

const PanelKernels kTable = {
    dispatch<tile_q8_0<1, 1>, tile_q8_0<1, 2>, tile_q8_0<2, 1>, true>,
    dispatch<tile_legacy<Legacy::kQ4_0, 1, 1>, tile_legacy<Legacy::kQ4_0, 1, 2>, tile_legacy<Legacy::kQ4_0, 2, 1>, true>,
    dispatch<tile_q45_k<false, 1, 1>, tile_q45_k<false, 1, 2>, tile_q45_k<false, 2, 1>>,
    dispatch<tile_q6_k_row<1>, tile_q6_k_row<2>, tile_q6_k<2, 1>, true>,
    dispatch<tile_q45_k<true, 1, 1>, tile_q45_k<true, 1, 2>, tile_q45_k<true, 2, 1>>,
    dispatch<tile_iq4_nl<1, 1>, tile_iq4_nl<1, 2>, tile_iq4_nl<2, 1>>,
    dispatch<tile_iq4_xs<1, 1>, tile_iq4_xs<1, 2>, tile_iq4_xs<2, 1>>,
    dispatch<tile_legacy<Legacy::kQ4_1, 1, 1>, tile_legacy<Legacy::kQ4_1, 1, 2>, tile_legacy<Legacy::kQ4_1, 2, 1>>,
    dispatch<tile_legacy<Legacy::kQ5_0, 1, 1>, tile_legacy<Legacy::kQ5_0, 1, 2>, tile_legacy<Legacy::kQ5_0, 2, 1>>,
    dispatch<tile_legacy<Legacy::kQ5_1, 1, 1>, tile_legacy<Legacy::kQ5_1, 1, 2>, tile_legacy<Legacy::kQ5_1, 2, 1>>,
    dispatch<tile_q23_k<false, 1, 1>, tile_q23_k<false, 1, 2>, tile_q23_k<false, 2, 1>>,
    dispatch<tile_q23_k<true, 1, 1>, tile_q23_k<true, 1, 2>, tile_q23_k<true, 2, 1>>};

}  // namespace

const PanelKernels* panel_kernels_avx2() { return &kTable; }

}  // namespace ork::ops
#pragma GCC pop_options
#else
namespace ork::ops {
const PanelKernels* panel_kernels_avx2() { return nullptr; }
}  // namespace ork::ops
#endif
