#include "npu/layout.h"

#include <cstring>
#include <type_traits>

#include "core/checked.h"
#include "core/error.h"
#include "npu/layout_int4.h"

namespace ork::npu {

const char* dtype_name(Dtype d) { return d == Dtype::kI8 ? "i8" : d == Dtype::kF16 ? "f16" : "i4"; }

namespace {
void check_not_i4(Dtype d, const char* what) {
  ORK_CHECK(d != Dtype::kI4, what, ": int4 operands have their own layout (npu/layout_int4.h)");
}
}  // namespace

int64_t pad_m(int64_t m) { return m == 1 ? 1 : int64_t(align_up(uint64_t(m), 4)); }
int64_t pad_k(int64_t k) { return int64_t(align_up(uint64_t(k), kKAlign)); }
int64_t pad_n(int64_t n, Dtype d) { return int64_t(align_up(uint64_t(n), uint64_t(b_n_group(d)))); }

void check_dims(int64_t m, int64_t k, int64_t n, const char* what) {
  ORK_CHECK(m >= 1 && m <= kMaxDim, what, ": M = ", m, " out of range [1, ", kMaxDim, "]");
  ORK_CHECK(k >= 1 && k <= kMaxDim, what, ": K = ", k, " out of range [1, ", kMaxDim, "]");
  ORK_CHECK(n >= 1 && n <= kMaxDim, what, ": N = ", n, " out of range [1, ", kMaxDim, "]");
}

namespace {

template <typename T>
void pack_a_t(const T* a, int64_t lda, int64_t rows, int64_t cols, int64_t mp, int64_t kp, Dtype d,
              T* dst) {
  std::memset(dst, 0, size_t(mp * kp) * sizeof(T));
  const int64_t c2 = a_c2(d);
  for (int64_t m = 0; m < rows; ++m) {
    const T* row = a + m * lda;
    for (int64_t k0 = 0; k0 < cols; k0 += c2) {
      T* out = dst + (k0 / c2) * mp * c2 + m * c2;
      const int64_t n = cols - k0 < c2 ? cols - k0 : c2;
      std::memcpy(out, row + k0, size_t(n) * sizeof(T));
    }
  }
}

template <typename T>
void unpack_a_t(const T* src, int64_t mp, int64_t rows, int64_t cols, Dtype d, T* a, int64_t lda) {
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t k = 0; k < cols; ++k) a[m * lda + k] = src[a_index(m, k, mp, d)];
}

template <typename T>
void pack_b_t(const T* b, int64_t n, int64_t k, Dtype d, T* dst) {
  const int64_t np = pad_n(n, d), kp = pad_k(k);
  std::memset(dst, 0, size_t(np * kp) * sizeof(T));
  const int64_t g = b_n_group(d);
  for (int64_t s = 0; s < k_segments(kp, d); ++s) {
    const int64_t ks = b_segment_width(s, kp, d);
    const int64_t k_begin = s * k_segment_width(d);
    T* seg = dst + b_segment_offset(s, np, d) / int64_t(sizeof(T));
    for (int64_t r = 0; r < n; ++r) {
      const T* row = b + r * k;
      for (int64_t kk = 0; kk < ks; kk += 32) {
        const int64_t kg = k_begin + kk;
        if (kg >= k) break;
        const int64_t cnt = k - kg < 32 ? k - kg : 32;
        T* out = seg + (r / g) * g * ks + (kk / 32) * g * 32 + (r % g) * 32;
        std::memcpy(out, row + kg, size_t(cnt) * sizeof(T));
      }
    }
  }
}

template <typename T>
void unpack_b_t(const T* src, int64_t n, int64_t k, Dtype d, T* b) {
  const int64_t np = pad_n(n, d), kp = pad_k(k);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) b[r * k + c] = src[b_index(r, c, np, kp, d)];
}

template <typename T>
void unpack_c_t(const T* src, int64_t mp, int64_t rows, int64_t cols, T* c, int64_t ldc, bool acc) {
  for (int64_t n0 = 0; n0 < cols; n0 += 4) {
    const T* plane = src + (n0 / 4) * mp * 4;
    const int64_t cnt = cols - n0 < 4 ? cols - n0 : 4;
    for (int64_t m = 0; m < rows; ++m) {
      const T* v = plane + m * 4;
      T* out = c + m * ldc + n0;
      for (int64_t j = 0; j < cnt; ++j) {
        if (acc) {
          if constexpr (std::is_integral_v<T>) {
            // int32: wrap like the hardware adder would rather than invoke UB.
            out[j] = T(uint32_t(out[j]) + uint32_t(v[j]));
          } else {
            out[j] += v[j];
          }
        } else {
          out[j] = v[j];
        }
      }
    }
  }
}

}  // namespace

void pack_a(Dtype d, const void* a, int64_t lda, int64_t rows, int64_t cols, int64_t mp, int64_t kp,
            void* dst) {
  check_not_i4(d, "pack_a");
  ORK_CHECK(rows <= mp && cols <= kp && kp % kKAlign == 0, "pack_a: block ", rows, "x", cols,
            " does not fit padded ", mp, "x", kp);
  if (d == Dtype::kI8)
    pack_a_t(static_cast<const int8_t*>(a), lda, rows, cols, mp, kp, d, static_cast<int8_t*>(dst));
  else
    pack_a_t(static_cast<const uint16_t*>(a), lda, rows, cols, mp, kp, d, static_cast<uint16_t*>(dst));
}

void unpack_a(Dtype d, const void* src, int64_t mp, int64_t kp, int64_t rows, int64_t cols, void* a,
              int64_t lda) {
  check_not_i4(d, "unpack_a");
  ORK_CHECK(rows <= mp && cols <= kp, "unpack_a: block ", rows, "x", cols, " exceeds ", mp, "x", kp);
  if (d == Dtype::kI8)
    unpack_a_t(static_cast<const int8_t*>(src), mp, rows, cols, d, static_cast<int8_t*>(a), lda);
  else
    unpack_a_t(static_cast<const uint16_t*>(src), mp, rows, cols, d, static_cast<uint16_t*>(a), lda);
}

int64_t k_segments(int64_t kp, Dtype d) { return (kp + k_segment_width(d) - 1) / k_segment_width(d); }
int64_t b_segment_width(int64_t s, int64_t kp, Dtype d) {
  const int64_t w = k_segment_width(d), rest = kp - s * w;
  return rest < w ? rest : w;
}
int64_t b_segment_offset(int64_t s, int64_t np, Dtype d) { return np * s * k_segment_width(d) * elt_bytes(d); }

int64_t b_index(int64_t n, int64_t k, int64_t np, int64_t kp, Dtype d) {
  const int64_t w = k_segment_width(d), s = k / w;
  return b_segment_offset(s, np, d) / elt_bytes(d) + b_index_in_segment(n, k - s * w, b_segment_width(s, kp, d), d);
}

uint64_t packed_weight_bytes(int64_t n, int64_t k, Dtype d) {
  if (d == Dtype::kI4) return packed_weight_bytes_i4(n, k);
  check_dims(1, k, n, "packed_weight_bytes");
  return checked_mul(checked_mul(uint64_t(pad_n(n, d)), uint64_t(pad_k(k)), "packed weight"),
                     uint64_t(elt_bytes(d)), "packed weight");
}

void pack_b(Dtype d, const void* b, int64_t n, int64_t k, void* dst) {
  check_not_i4(d, "pack_b");
  check_dims(1, k, n, "pack_b");
  if (d == Dtype::kI8)
    pack_b_t(static_cast<const int8_t*>(b), n, k, d, static_cast<int8_t*>(dst));
  else
    pack_b_t(static_cast<const uint16_t*>(b), n, k, d, static_cast<uint16_t*>(dst));
}

void unpack_b(Dtype d, const void* src, int64_t n, int64_t k, void* b) {
  check_not_i4(d, "unpack_b");
  check_dims(1, k, n, "unpack_b");
  if (d == Dtype::kI8)
    unpack_b_t(static_cast<const int8_t*>(src), n, k, d, static_cast<int8_t*>(b));
  else
    unpack_b_t(static_cast<const uint16_t*>(src), n, k, d, static_cast<uint16_t*>(b));
}

void unpack_c_i32(const int32_t* src, int64_t mp, int64_t rows, int64_t cols, int32_t* c, int64_t ldc,
                  bool accumulate) {
  unpack_c_t(src, mp, rows, cols, c, ldc, accumulate);
}

void unpack_c_f32(const float* src, int64_t mp, int64_t rows, int64_t cols, float* c, int64_t ldc,
                  bool accumulate) {
  unpack_c_t(src, mp, rows, cols, c, ldc, accumulate);
}

void pack_c_i32(const int32_t* c, int64_t rows, int64_t cols, int64_t mp, int64_t np, int32_t* dst) {
  std::memset(dst, 0, size_t(mp * np) * sizeof(int32_t));
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t n = 0; n < cols; ++n) dst[c_index(m, n, mp)] = c[m * cols + n];
}

}  // namespace ork::npu
