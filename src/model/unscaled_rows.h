// UnscaledRows — a matmul's results as a quantizing backend may leave them for their reader
// (MatmulBackend's *_unscaled calls and ffn): rows of n values (row stride n) whose first n_sums
// columns hold the job's int32 sums as bit patterns in the float storage, scaled on reading exactly
// as quant::dequantize_i32 scales them — (float(sum) · sa[r]) · sb[j], quant::dequantize_i32_one —
// and whose other columns [n_sums, n) hold f32 results already (the CPU side of a split call).
// n_sums 0: plain f32 rows. Reading a row through row() gives the bits dequantize_i32 would have
// written, so a reader that scales as it reads computes what it computed on the scaled rows.
// Non-owning: y is the caller's buffer; sa (a scale per row) and sb (one per column below n_sums)
// are the backend's, valid until its next call. Thread-safety: row() of distinct rows may run
// concurrently; scale_row writes its row.
#pragma once

#include <cstdint>

namespace ork::model {

struct UnscaledRows {
  float* y = nullptr;
  int64_t n = 0;
  int64_t n_sums = 0;
  const float* sa = nullptr;
  const float* sb = nullptr;

  static UnscaledRows f32(float* y, int64_t n) { return {y, n, 0, nullptr, nullptr}; }
  // f32 rows the caller may not write: nothing writes through y while n_sums is 0.
  static UnscaledRows f32(const float* y, int64_t n) { return f32(const_cast<float*>(y), n); }
  // Row r as f32 into out (n floats; out may be the row itself).
  void row(int64_t r, float* out) const;
  // Row r scaled in place.
  void scale_row(int64_t r) const { row(r, y + r * n); }
  // Rows [0, m) scaled in place; afterwards *this describes f32 rows.
  void scale_rows(int64_t m);
};

}  // namespace ork::model
