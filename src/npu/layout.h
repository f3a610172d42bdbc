// Native NPU layouts of matmul operands (rknn-toolkit2 rknn_matmul_api.h; mtx512/rk3588-npu
// feature_data / weight_int8 / weight_fp16), with zero padding for sizes that are not aligned.
//
// C (M×N) = A (M×K) · Bᵀ, B stored N×K, all row-major on the host.
//   A: (Kp/C2, Mp, C2), C2 = 16 (int8) / 8 (fp16)            — element index a_index()
//   B int8: (Np/32, Kp/32, 32, 32); fp16: (Np/16, Kp/32, 16, 32) — b_index()
//     K is stored in segments of k_segment_width(d) columns (2048 int8, 1024 fp16): segment s holds
//     columns [s·W, s·W + Ks) as its own (Np/.., Ks/32, .., 32) block, segments one after another.
//     One task reads one segment. The rknn matmul API segments at 8192 ("On RK3588 B is split into
//     K-segments of 8192"), the widest K a task takes (kKSegmentMax); ork segments narrower so that a
//     128-row prefill tile of A fits the CBUF data banks beside the weights (cbuf_budget.h) and every
//     weight is read once per 128 rows, not once per 16–64 (docs/board-model.md "Prefill"). For
//     K ≤ W this is the plain native layout.
//   C: (Np/4, Mp, 4) for int32 / fp32                          — c_index()
// Kp = K rounded up to 32; Np = N rounded up to 32 (int8) / 16 (fp16); Mp = M rounded up to 4
// (M = 1 stays 1). Padding elements are zero. fp16 values are passed as their uint16_t bit patterns.
// All functions are pure and thread-safe; sizes are checked (ork::Error on non-positive or huge sizes).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ork::npu {

// Operand type; outputs are int32 / fp32. kI4 names a weight packed by layout_int4.h (int4 codes,
// two per byte, K chunks of 480): only packed_weight_bytes, pad_n and dtype_name accept it here; the
// int8 / fp16 packers of this file throw for it. matmul.h runs it (A: int4 codes held as int8_t,
// C: int32, planned by task_split_int4.h).
enum class Dtype { kI8, kF16, kI4 };

const char* dtype_name(Dtype d);            // "i8" / "f16" / "i4"
inline int64_t elt_bytes(Dtype d) { return d == Dtype::kI8 ? 1 : 2; }  // i8 / f16 only
inline int64_t a_c2(Dtype d) { return d == Dtype::kI8 ? 16 : 8; }        // A channel group (i8 / f16)
// B kernel group (N align): 32 i8, 16 f16, 64 i4.
inline int64_t b_n_group(Dtype d) { return d == Dtype::kI8 ? 32 : d == Dtype::kF16 ? 16 : 64; }

constexpr int64_t kKAlign = 32;
constexpr int64_t kKSegmentMax = 8192;  // widest K of one task (CNA_DATA_SIZE1; rknn API segments)
constexpr int64_t kPrefillTileRows = 128;  // rows of A a segment's width lets one task take
constexpr int64_t kMaxDim = 1 << 20;  // largest M, K or N accepted

int64_t pad_m(int64_t m);             // 1 → 1, else multiple of 4
int64_t pad_k(int64_t k);             // multiple of 32
int64_t pad_n(int64_t n, Dtype d);    // multiple of 32 (i8) / 16 (f16) / 64 (i4)
void check_dims(int64_t m, int64_t k, int64_t n, const char* what);  // 1..kMaxDim each

// ---- A --------------------------------------------------------------------------------------------
// Element index of A[m][k] in the (kp/C2, mp, C2) layout.
inline int64_t a_index(int64_t m, int64_t k, int64_t mp, Dtype d) {
  const int64_t c2 = a_c2(d);
  return (k / c2) * mp * c2 + m * c2 + k % c2;
}
// Packs rows [0, rows) × columns [0, cols) of `a` (row stride `lda` elements) into the native layout
// of an (mp × kp) block at `dst` (mp·kp elements of elt_bytes(d)); zero elsewhere.
void pack_a(Dtype d, const void* a, int64_t lda, int64_t rows, int64_t cols, int64_t mp, int64_t kp,
            void* dst);
// Inverse of pack_a on the valid region: writes rows × cols into `a` (row stride lda).
void unpack_a(Dtype d, const void* src, int64_t mp, int64_t kp, int64_t rows, int64_t cols, void* a,
              int64_t lda);

// ---- B --------------------------------------------------------------------------------------------
// Element index of B[n][k] within one K segment of width ks (a multiple of 32).
inline int64_t b_index_in_segment(int64_t n, int64_t k, int64_t ks, Dtype d) {
  const int64_t g = b_n_group(d);
  return (n / g) * g * ks + (k / 32) * g * 32 + (n % g) * 32 + k % 32;
}
// Element index of B[n][k] in the whole packed weight (segments of k_segment_width(d) columns).
int64_t b_index(int64_t n, int64_t k, int64_t np, int64_t kp, Dtype d);
// Columns of a full K segment: 2048 (int8), 1024 (fp16) — the widest multiple of 32 at which
// kPrefillTileRows rows of A fit the CBUF beside a weight atom (cbuf_budget.h; tested by
// LayoutTest.SegmentWidthLetsOnePrefillTileTakeEveryRow).
constexpr int64_t k_segment_width(Dtype d) { return d == Dtype::kI8 ? 2048 : 1024; }
// Byte offset of K segment `s` in the packed weight; its width in columns; the segment count.
int64_t b_segment_offset(int64_t s, int64_t np, Dtype d);
int64_t b_segment_width(int64_t s, int64_t kp, Dtype d);
int64_t k_segments(int64_t kp, Dtype d);
// Bytes of a packed N×K weight (kI4: packed_weight_bytes_i4).
uint64_t packed_weight_bytes(int64_t n, int64_t k, Dtype d);
// Packs B (n×k row-major, stride k) into `dst` (packed_weight_bytes(n, k, d) bytes).
void pack_b(Dtype d, const void* b, int64_t n, int64_t k, void* dst);
void unpack_b(Dtype d, const void* src, int64_t n, int64_t k, void* b);

// ---- C --------------------------------------------------------------------------------------------
// Element index of C[m][n] in the (np/4, mp, 4) layout.
inline int64_t c_index(int64_t m, int64_t n, int64_t mp) { return (n / 4) * mp * 4 + m * 4 + n % 4; }
// Unpacks rows × cols of a native (mp × np) C block (4-byte elements) into `c` (row stride ldc).
// When `accumulate`, adds to c (int32 wrapping add for int32, f32 add for fp32).
void unpack_c_i32(const int32_t* src, int64_t mp, int64_t rows, int64_t cols, int32_t* c, int64_t ldc,
                  bool accumulate);
void unpack_c_f32(const float* src, int64_t mp, int64_t rows, int64_t cols, float* c, int64_t ldc,
                  bool accumulate);
// Packs C into the native layout (tests and references; padding zero). dst: np·mp elements.
void pack_c_i32(const int32_t* c, int64_t rows, int64_t cols, int64_t mp, int64_t np, int32_t* dst);

}  // namespace ork::npu
