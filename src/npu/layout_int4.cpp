#include "npu/layout_int4.h"

#include <cstring>

#include "core/checked.h"
#include "core/error.h"
#include "npu/layout.h"

namespace ork::npu {

int64_t pad_n_i4(int64_t n) { return int64_t(align_up(uint64_t(n), uint64_t(kI4NGroup))); }

void check_i4_chunk(int64_t chunk) {
  ORK_CHECK(chunk >= 32 && chunk <= kI4KChunk && chunk % 32 == 0, "int4 K chunk of ", chunk,
            " columns: must be a multiple of 32 in [32, ", kI4KChunk, "] (larger chunks can overflow int16)");
}
int64_t i4_k_chunks(int64_t kp, int64_t chunk) { return (kp + chunk - 1) / chunk; }
int64_t i4_chunk_width(int64_t c, int64_t kp, int64_t chunk) {
  const int64_t rest = kp - c * chunk;
  return rest < chunk ? rest : chunk;
}
int64_t i4_chunk_offset(int64_t c, int64_t np, int64_t chunk) { return np * c * chunk / 2; }

uint64_t packed_weight_bytes_i4(int64_t n, int64_t k) {
  check_dims(1, k, n, "packed_weight_bytes_i4");
  return uint64_t(pad_n_i4(n)) * uint64_t(pad_k(k)) / 2;
}

namespace {

int checked_code(int8_t v, int64_t row, int64_t col, const char* what) {
  ORK_CHECK(v >= kI4Min && v <= kI4Max, what, ": code ", int(v), " at (", row, ", ", col,
            ") is outside the int4 range [-8, 7]");
  return v;
}

void put_nibble(uint8_t* byte, int64_t k, int code, bool swap) {
  const bool high = i4_high_nibble(k) != swap;
  const uint8_t v = uint8_t(code) & 15;
  *byte = high ? uint8_t((*byte & 0x0f) | (v << 4)) : uint8_t((*byte & 0xf0) | v);
}

}  // namespace

void pack_a_i4(const int8_t* codes, int64_t lda, int64_t col0, int64_t rows, int64_t cols, int64_t mp,
               int64_t kp, uint8_t* dst, bool swap_nibbles) {
  ORK_CHECK(rows >= 0 && rows <= mp && cols >= 0 && cols <= kp && kp % 32 == 0, "pack_a_i4: ", rows, "×",
            cols, " does not fit a ", mp, "×", kp, " block");
  std::memset(dst, 0, size_t(mp * kp / 2));
  for (int64_t m = 0; m < rows; ++m) {
    const int8_t* row = codes + m * lda + col0;
    for (int64_t k = 0; k < cols; ++k)
      put_nibble(dst + i4_a_byte(m, k, mp), k, checked_code(row[k], m, col0 + k, "pack_a_i4"), swap_nibbles);
  }
}

void pack_b_i4(const int8_t* codes, int64_t n, int64_t k, uint8_t* dst, bool swap_nibbles, int64_t chunk) {
  check_i4_chunk(chunk);
  const int64_t np = pad_n_i4(n), kp = pad_k(k);
  std::memset(dst, 0, size_t(packed_weight_bytes_i4(n, k)));
  for (int64_t c = 0; c < i4_k_chunks(kp, chunk); ++c) {
    const int64_t first = i4_chunk_first(c, chunk), kc = i4_chunk_width(c, kp, chunk);
    uint8_t* block = dst + i4_chunk_offset(c, np, chunk);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t t = 0; t < kc && first + t < k; ++t)
        put_nibble(block + i4_b_byte_in_chunk(j, t, kc), t,
                   checked_code(codes[j * k + first + t], j, first + t, "pack_b_i4"), swap_nibbles);
  }
}

void unpack_b_i4(const uint8_t* src, int64_t n, int64_t k, int8_t* codes, int64_t chunk) {
  check_i4_chunk(chunk);
  const int64_t np = pad_n_i4(n), kp = pad_k(k);
  for (int64_t c = 0; c < i4_k_chunks(kp, chunk); ++c) {
    const int64_t first = i4_chunk_first(c, chunk), kc = i4_chunk_width(c, kp, chunk);
    const uint8_t* block = src + i4_chunk_offset(c, np, chunk);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t t = 0; t < kc && first + t < k; ++t)
        codes[j * k + first + t] = int8_t(i4_nibble(block[i4_b_byte_in_chunk(j, t, kc)], i4_high_nibble(t)));
  }
}

void unpack_c_i16(const int16_t* src, int64_t mp, int64_t rows, int64_t cols, int32_t* c, int64_t ldc,
                  bool accumulate) {
  for (int64_t m = 0; m < rows; ++m) {
    int32_t* out = c + m * ldc;
    for (int64_t j = 0; j < cols; ++j) {
      const int32_t v = src[i4_c_index(m, j, mp)];
      out[j] = accumulate ? int32_t(uint32_t(out[j]) + uint32_t(v)) : v;
    }
  }
}

}  // namespace ork::npu
