// Native layouts of int4 × int4 → int16 matmul operands on the RK3588 (rknn-toolkit2
// rknn_matmul_api.h; happyme531/rknpu2_matmul_open rk_npu_i4_cpu.cpp; docs/hardware.md "int4 on the
// RK3588"). C (M×N) = A (M×K) · Bᵀ, B stored N×K; host codes are int8_t values in [−8, 7].
//
//   A: (Kp/32, Mp, 32) int4 — 16 bytes per (row, 32-column group); byte i4_a_byte().
//   B: in K chunks of at most kI4KChunk columns, each its own (Np/64, Kc/32, 64, 32) int4 block,
//      chunks one after another — so every task reads one dense block and its int16 sums cannot
//      overflow (480 · (−8)·(−8) = 30720 ≤ 32767, happyme531 I4_K_TILE_UNIVERSAL).
//   C: int16 in (Np/8, Mp, 8), one block per task; K chunks are added on the host in int32.
// Two codes per byte, the EVEN column in the HIGH nibble ("even element in HIGH nibble",
// rk_npu_i4_pack_a_tile). Kp = K rounded up to 32, Np = N rounded up to 64; padding codes are 0.
// Pure functions, thread-safe; bad sizes or codes outside [−8, 7] throw ork::Error naming them.
#pragma once

#include <cstdint>

namespace ork::npu {

constexpr int64_t kI4NGroup = 64;   // B kernel group: N alignment of an int4 task
constexpr int64_t kI4KChunk = 480;  // columns per K chunk: no int16 overflow for any codes
constexpr int kI4Min = -8, kI4Max = 7;

int64_t pad_n_i4(int64_t n);  // multiple of 64

// Byte of A[m][k] in an (kp/32, mp, 32) block; the element's nibble is the high one when k is even.
inline int64_t i4_a_byte(int64_t m, int64_t k, int64_t mp) { return ((k / 32) * mp + m) * 16 + (k % 32) / 2; }
// Byte of B[n][k] within one K chunk of width kc (a multiple of 32).
inline int64_t i4_b_byte_in_chunk(int64_t n, int64_t k, int64_t kc) {
  return (((n / 64) * (kc / 32) + k / 32) * 64 + n % 64) * 16 + (k % 32) / 2;
}
inline bool i4_high_nibble(int64_t k) { return k % 2 == 0; }
// The signed code stored in one nibble of `byte`.
inline int i4_nibble(uint8_t byte, bool high) {
  const int v = high ? byte >> 4 : byte & 15;
  return v >= 8 ? v - 16 : v;
}

// K chunks of `chunk` columns (a multiple of 32 in [32, kI4KChunk]; a weight-scale group on the NPU
// when smaller than the default) of a padded K: their count, the width of chunk c, its first column.
void check_i4_chunk(int64_t chunk);  // ork::Error naming the value otherwise
int64_t i4_k_chunks(int64_t kp, int64_t chunk = kI4KChunk);
int64_t i4_chunk_width(int64_t c, int64_t kp, int64_t chunk = kI4KChunk);
inline int64_t i4_chunk_first(int64_t c, int64_t chunk = kI4KChunk) { return c * chunk; }
// Byte offset of K chunk c in a packed N×K int4 weight.
int64_t i4_chunk_offset(int64_t c, int64_t np, int64_t chunk = kI4KChunk);
// Bytes of a packed N×K int4 weight: Np·Kp/2.
uint64_t packed_weight_bytes_i4(int64_t n, int64_t k);

// Packs rows [0, rows) × columns [col0, col0 + cols) of `codes` (row stride lda) into an
// (kp/32, mp, 32) A block at `dst` (mp·kp/2 bytes; zero outside the valid region). `swap_nibbles`
// writes the even column to the LOW nibble (fault injection for fidelity tests only).
void pack_a_i4(const int8_t* codes, int64_t lda, int64_t col0, int64_t rows, int64_t cols, int64_t mp,
               int64_t kp, uint8_t* dst, bool swap_nibbles = false);
// Packs B (n×k codes, row stride k) into `dst` (packed_weight_bytes_i4(n, k) bytes), chunk by chunk.
void pack_b_i4(const int8_t* codes, int64_t n, int64_t k, uint8_t* dst, bool swap_nibbles = false,
               int64_t chunk = kI4KChunk);
// Inverse of pack_b_i4 (tests): codes n×k.
void unpack_b_i4(const uint8_t* src, int64_t n, int64_t k, int8_t* codes, int64_t chunk = kI4KChunk);

// Element index of C[m][n] in an (np/8, mp, 8) int16 block.
inline int64_t i4_c_index(int64_t m, int64_t n, int64_t mp) { return (n / 8) * mp * 8 + m * 8 + n % 8; }
// Widens rows × cols of a native int16 C block into `c` (int32, row stride ldc); `accumulate` adds.
void unpack_c_i16(const int16_t* src, int64_t mp, int64_t rows, int64_t cols, int32_t* c, int64_t ldc,
                  bool accumulate);

}  // namespace ork::npu
