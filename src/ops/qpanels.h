// QPanels — Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL or IQ4_XS weights re-laid out in panels of 16 rows for a register-tiled int8 GEMM.
//
// The GGUF layout puts each weight row's 32-element blocks one after another, so a dot product
// ends with a horizontal sum per output and every (row, column) pair of a tile repeats the same
// scale arithmetic. In a panel the 16 rows' quants of one block are interleaved in groups of four
// consecutive elements, so one 64-byte vector holds four consecutive quants of 16 rows, and an
// instruction that sums groups of four byte products (x86 vpdpbusd, Arm sdot by element) against a
// broadcast of four activation bytes yields 16 outputs at once.
//
//   panel p = weight rows 16p .. 16p+15 (rows past N are zero: scales 0, weights 0)
//   per panel:  the scale region, one entry per block (nb blocks), padded to a multiple of 64 bytes:
//     Q8_0, Q4_0, Q5_0, IQ4_NL:  uint16 d[16]     the rows' block scales, fp16 bits as in the GGUF block
//     Q4_1, Q5_1:  uint16 d[16], m[16]      scales and offsets, fp16 bits as in the GGUF block
//     IQ4_XS:      uint16 d[16]; int8 l[8][16]  the sub-block scales ls − 32 (in [−32, 31])
//     Q4_K, Q5_K:  uint16 d[16], dmin[16]   fp16 bits as in the GGUF block
//                  uint8 sc[8][16], m[8][16]  the 6-bit sub-block scales and mins, unpacked
//     Q6_K:        uint16 d[16]; int8 sc[16][16]  the 16 sub-block scales of each row
//     Q2_K:        uint16 d[16], dmin[16]; uint8 sc[16][16], m[16][16]  the 4-bit scales and mins
//     Q3_K:        uint16 d[16]; int8 sc[16][16]  the 6-bit sub-block scales − 32 (in [−32, 31])
//   then the quant region, per block:
//   Q8_0:  uint8 u[nb][8][16][4]   u[b][g][r][e] = (quant 4g+e of block b of row r) XOR 0x80,
//          i.e. the quant + 128 as an unsigned byte (vpdpbusd multiplies unsigned by signed bytes);
//          Σ u·x = Σ w·x + 128·Σx.
//   Q4_0:  uint8 q[nb][4][16][4]   q[b][g][r][e] = byte 4g+e of row r's GGUF block: its low nibble
//          is element 4g+e, its high nibble element 16+4g+e (the weight is nibble − 8);
//          Σ nibble·x = Σ w·x + 8·Σx.
//   Q4_K:  uint8 q[nb][32][16][4]  q[b][G][r][e] = byte 4G+e of row r's 128 GGUF quant bytes: group
//          G = 8j + g holds sub-block 2j (low nibbles) and 2j+1 (high nibbles), elements 4g .. 4g+3.
//   IQ4_NL: as Q4_0 (the nibbles are indices into quant::kIQ4NLValues).
//   Q4_1:  as Q4_0 (q = nibble in [0, 15], the weight d·q + m).
//   Q5_0, Q5_1: the Q4_0 groups, then one group h[16][4] of the 5th bits: bit j of the GGUF uint32
//          qh (element j) is bit (j % 16) / 4 + 4·(j / 16) of byte j % 4, so nibble group g finds
//          its low elements' bits at bit g and its high elements' at bit 4 + g of every byte
//          (q = nibble | bit << 4 in [0, 31]; the weight is Q5_0: d·(q − 16), Q5_1: d·q + m).
//   IQ4_XS: uint8 q[nb][32][16][4]  group G = 4j + g: GGUF qs bytes 16j + 4g .. +3 of the 16 rows, i.e.
//          sub-block j's elements 4g .. 4g+3 (low nibbles) and 16+4g .. 16+4g+3 (high nibbles).
//   Q5_K:  the Q4_K groups, then uint8 qh[nb][8][16][4]: qh group g = GGUF qh bytes 4g .. 4g+3 of
//          the 16 rows; bit j of qh byte l is the 5th bit of element 32j + l (q = nibble | bit << 4,
//          in [0, 31]).
//   Q2_K:  uint8 q[nb][16][16][4]  group G = GGUF qs bytes 4G .. 4G+3 of the 16 rows: bits 2g, 2g+1
//          of byte 4G+e hold element 128·(G / 8) + 32g + 4·(G % 8) + e (q in [0, 3]), sub-block
//          8·(G / 8) + 2g + (G % 8) / 4.
//   Q3_K:  Q2_K's q groups, then uint8 h[nb][8][16][4]: h group j = GGUF hmask bytes 4j .. 4j+3 of
//          the 16 rows. Element 128h + 32g + l (l < 32) has its low 2 bits at bits 2g, 2g+1 of q
//          group 8h + l / 4 and its high bit at bit 4h + g of h group l / 4 (byte l % 4 of the row
//          in both); q = low | high << 2 in [0, 7], the weight is q − 4.
//   Q6_K:  uint8 ql[nb][32][16][4], qh[nb][16][16][4]: groups of 4 GGUF ql / qh bytes of the 16
//          rows. Elements 128h + 32k + 4l' .. +3 (half h, quarter k, l' < 8) have their low 4 bits in
//          ql group 16h + 8(k % 2) + l' (nibble k / 2) and their high 2 bits in qh group 8h + l'
//          (bits 2k, 2k+1); q = low | high << 4 in [0, 63], the weight is q − 32.
// Q8_0, Q4_0 and Q6_K panels are stored in pairs, block by block: a decode tile of two panels then
// reads one ascending stream rather than each panel's scales and quants — four streams (the Q4_0
// mix decoded 6–16 % faster, the Q6_K mix 4–13 %: docs/ops.md, "one stream a thread"). Panels 2P
// and 2P+1 share the 2·panel_bytes() from panel(2P) (an odd last panel has an unused partner);
// block b of the pair takes PairLayout::block() bytes from b·block(): panel 2P's scale entry (as
// above), panel 2P+1's, panel 2P's quants, panel 2P+1's (kQ8_0Pairs, kQ4_0Pairs, kQ6_KPairs).
// Activations: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL take BlockQ8A rows (32 values, Σx stored, so the integer dot is
// recovered exactly); Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS take quant::BlockQ8_K rows (256 values, 16-value sums).
//
// Numerics per output (identical on every ISA and independent of tiling, threads and M):
//   Q8_0, Q4_0, IQ4_NL:  acc = 0;  per block:  p = Σ_e w·x (exact int32; IQ4_NL: w = the grid value);
//                acc = fma(f32(d_w)·d_x, f32(p), acc)
//   Q5_0:        as Q4_0 with w = q − 16
//   Q4_1, Q5_1:  per block:  p = Σ_e q·x (exact int32);  acc = fma(f32(d_w)·d_x, f32(p), acc);
//                acc = fma(f32(m)·d_x, f32(Σx), acc)      (Σx = BlockQ8A::sum, exact)
//   IQ4_XS:      per super-block:  t = Σ_s l_s·Σ_{e∈s} grid(q)·x (exact int32);  acc = fma(f32(d)·d_x, f32(t), acc)
//   Q4_K, Q5_K, Q2_K:  per super-block (Q2_K: 16 sub-blocks of 16, msum over bsums[s]):  isum = Σ_s sc_s·Σ_{e∈s} q·x,  msum = Σ_s m_s·Σ_{e∈s} x (exact int32);
//                acc = fma(f32(d)·d_x, f32(isum), acc);  acc = fma(−(f32(dmin)·d_x), f32(msum), acc)
//   Q6_K, Q3_K:  per super-block:  t = Σ_s sc_s·(Σ_{e∈s} q·x − z·Σ_{e∈s} x) (exact int32; z = 32
//                for Q6_K, 4 for Q3_K, Σ_{e∈s} x = bsums[s]);  acc = fma(f32(d)·d_x, f32(t), acc)
// The integer sums are exact, so the only roundings besides the activation quantization are these
// f32 multiplies, conversions and fused multiply-adds.
//
// Ownership: QPanels owns its 64-byte-aligned storage. Thread-safety: immutable after packing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/huge_page_arena.h"
#include "core/thread_pool.h"
#include "ops/cpu_features.h"
#include "ops/qkernels.h"
#include "quant/types.h"

namespace ork::ops {

inline constexpr int kPanelRows = 16;
inline constexpr int kPanelGroupBytes = kPanelRows * 4;  // 4 bytes × 16 rows: one 64-byte vector
inline constexpr int kPanelQ4KScaleBytes = 64 + 2 * 8 * kPanelRows;  // 320: d, dmin, sc, m
inline constexpr int kPanelQ4KQuantBytes = 32 * kPanelGroupBytes;    // 2048: 128 bytes × 16 rows
inline constexpr int kPanelQ5KQuantBytes = 40 * kPanelGroupBytes;    // 2560: + 32 qh bytes × 16 rows
inline constexpr int kPanelIQ4XSScaleBytes = 32 + 8 * kPanelRows;    // 160: d, l
inline constexpr int kPanelQ2KScaleBytes = 64 + 2 * 16 * kPanelRows;  // 576: d, dmin, sc, m
inline constexpr int kPanelQ2KQuantBytes = 16 * kPanelGroupBytes;      // 1024: 64 bytes × 16 rows
inline constexpr int kPanelQ6KScaleBytes = 32 + 16 * kPanelRows;      // 288: d, sc
inline constexpr int kPanelQ3KScaleBytes = 32 + 16 * kPanelRows;      // 288: d, sc − 32
inline constexpr int kPanelQ3KQuantBytes = 24 * kPanelGroupBytes;     // 1536: qs 1024, hmask 512
inline constexpr int kPanelQ6KQuantBytes = 48 * kPanelGroupBytes;    // 3072: ql 2048, qh 1024

// The blocks of a type stored in pairs: `scale` and `quant` bytes per block of one panel.
struct PairLayout {
  int64_t scale, quant;
  constexpr int64_t block() const { return 2 * (scale + quant); }
  // Block b of panel c (0 or 1) of the pair at `pair`: its scale entry and its quants. With the pair
  // 64-byte aligned, the quants are 64-byte aligned and the scales 32-byte aligned.
  template <typename Byte>
  Byte* scales(Byte* pair, int64_t b, int c) const {
    return pair + b * block() + c * scale;
  }
  template <typename Byte>
  Byte* quants(Byte* pair, int64_t b, int c) const {
    return pair + b * block() + 2 * scale + c * quant;
  }
};
inline constexpr PairLayout kQ4_0Pairs{2 * kPanelRows, 4 * kPanelGroupBytes};       // 576 bytes a block
inline constexpr PairLayout kQ8_0Pairs{2 * kPanelRows, 8 * kPanelGroupBytes};      // 1088 bytes a block
inline constexpr PairLayout kQ6_KPairs{kPanelQ6KScaleBytes, kPanelQ6KQuantBytes};  // 6720 bytes a block
static_assert(kQ4_0Pairs.block() % 64 == 0 && kQ8_0Pairs.block() % 64 == 0 && kQ6_KPairs.block() % 64 == 0 &&
              (2 * kPanelQ6KScaleBytes) % 64 == 0);  // every pair's quants 64-byte aligned

class QPanels {
 public:
  QPanels() = default;
  // Whether `type` has a panel layout (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS).
  static bool supports(quant::Type type);
  // Whether its panels are stored in pairs (Q8_0, Q4_0, Q6_K: PairLayout).
  static bool paired(quant::Type type) {
    return type == quant::Type::Q8_0 || type == quant::Type::Q4_0 || type == quant::Type::Q6_K;
  }
  // Packs N rows of K elements of `type` (GGUF bytes, row stride quant::row_bytes(type, K), no
  // alignment needed). K must be a positive multiple of the block size, N positive, and supports(type)
  // (ork::Error otherwise). Panels are packed in parallel on `pool` when given. With `arena` the
  // panels are a slice of it (packed_bytes(type, n, k) bytes), which must outlive the QPanels;
  // without, the QPanels owns its memory.
  static QPanels pack(quant::Type type, const void* data, int64_t n, int64_t k,
                      ThreadPool* pool = nullptr, HugePageArena* arena = nullptr);
  // The bytes pack takes for these shapes (bytes() of the result); throws as pack on bad shapes.
  static uint64_t packed_bytes(quant::Type type, int64_t n, int64_t k);

  quant::Type type() const { return type_; }
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  int64_t block_elems() const { return block_elems_; }  // 32, or 256 for the K types and IQ4_XS
  int64_t blocks() const { return k_ / block_elems_; }
  int64_t panels() const { return (n_ + kPanelRows - 1) / kPanelRows; }
  // Bytes of one panel (a multiple of 64), of its scale region, of one block's quants in a panel,
  // and of the whole matrix (paired types: whole pairs, so an odd last panel's unused partner too).
  // panel(p): where panel p starts (paired types: for even p, its pair — where every tile starts).
  int64_t panel_bytes() const { return panel_bytes_; }
  int64_t scale_bytes() const { return scale_bytes_; }
  int64_t block_bytes() const { return block_bytes_; }
  size_t bytes() const { return size_t(stored_panels() * panel_bytes_); }
  const uint8_t* panel(int64_t p) const { return data_.get() + p * panel_bytes_; }

  // Writes the GGUF bytes back (N rows); the inverse of pack, for tests and tools.
  void unpack(void* data) const;

 private:
  struct Free {
    Free() : owned(true) {}
    explicit Free(bool owns) : owned(owns) {}
    bool owned;  // false: a slice of a HugePageArena, which unmaps it
    void operator()(uint8_t* p) const;
  };
  static QPanels shaped(quant::Type type, int64_t n, int64_t k);
  int64_t stored_panels() const { return paired(type_) ? (panels() + 1) / 2 * 2 : panels(); }
  std::unique_ptr<uint8_t[], Free> data_;
  quant::Type type_ = quant::Type::Q8_0;
  int64_t n_ = 0, k_ = 0, block_elems_ = 32, panel_bytes_ = 0, scale_bytes_ = 0, block_bytes_ = 0;
};

// y[i·ys + 16c + r] for rows i < nx of x (activation rows as above, stride xs bytes) and the ncol first
// columns of `np` consecutive panels starting at `panels` (1 <= np <= kPanelTileMax,
// (np−1)·16 < ncol <= np·16, 1 <= nx <= kPanelTileX; paired types: `panels` is a pair, an even panel).
// Numerics as in the header comment.
inline constexpr int kPanelTileMax = 2;
inline constexpr int kPanelTileX = 4;
using PanelTileFn = void (*)(int64_t nb, const uint8_t* panels, int64_t panel_bytes,
                             int64_t scale_bytes, int np, int ncol, const uint8_t* x, int64_t xs,
                             int nx, float* y, int64_t ys);

struct PanelKernels {
  PanelTileFn q8_0 = nullptr;
  PanelTileFn q4_0 = nullptr;
  PanelTileFn q4_k = nullptr;
  PanelTileFn q6_k = nullptr;
  PanelTileFn q5_k = nullptr;
  PanelTileFn iq4_nl = nullptr;
  PanelTileFn iq4_xs = nullptr;
  PanelTileFn q4_1 = nullptr;
  PanelTileFn q5_0 = nullptr;
  PanelTileFn q5_1 = nullptr;
  PanelTileFn q2_k = nullptr;
  PanelTileFn q3_k = nullptr;
};

// The panel kernel of `isa` for `type`, or null when there is none (then the type runs on the GGUF
// layout). The scalar kernels are the reference every vector kernel must equal bit for bit.
PanelTileFn panel_kernel(quant::Type type, Isa isa);
const PanelKernels* panel_kernels_scalar();
const PanelKernels* panel_kernels_avx2();        // every type; null when not built for x86-64
const PanelKernels* panel_kernels_avx512vnni();  // null when not built for x86-64
const PanelKernels* panel_kernels_neon();        // null when not built for aarch64

// Y[M×N] = X[M×K] · Wᵀ for packed W, with activations quantized per row (quantize_row_q8a, or
// quantize_row_q8k for the K types), on `pool`, with the panel kernel of `isa` (ork::Error when it has none).
// x: M rows of K f32; y: M rows of N f32 (must not overlap x). Every output is computed by one
// thread with the same operations whatever the thread count, tiling and M.
void matmul_qpanels(ThreadPool& pool, const float* x, int64_t m, const QPanels& w, float* y, Isa isa);
// The same with best_panel_isa(w.type()).
void matmul_qpanels(ThreadPool& pool, const float* x, int64_t m, const QPanels& w, float* y);
// ys[i] = X · ws[i]ᵀ for weights that read the same X (a layer's Q/K/V, its gate and up), each with
// best_panel_isa(ws[i]->type()): X quantized once and the tiles of all of them in one parallel loop
// (the same numbers as matmul_qpanels per weight). Requires equal K and activation formats
// (same_activations); ork::Error otherwise.
void matmul_qpanels_group(ThreadPool& pool, const float* x, int64_t m, std::span<const QPanels* const> ws,
                          std::span<float* const> ys);
// Whether a and b take the same quantized activations (equal K and block size).
bool same_activations(const QPanels& a, const QPanels& b);
// The best ISA of this CPU with a panel kernel for `type` (Isa::kScalar when no vector kernel has one;
// ork::Error when QPanels::supports(type) is false).
Isa best_panel_isa(quant::Type type);

}  // namespace ork::ops
