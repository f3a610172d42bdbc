// ResidualNorm — a linear's input still to be computed from the residual stream: the pending
// residual add of a layer's branch and the RMSNorm of the next linear's input, done by whoever reads
// the rows. Row i of the input is
//   s_i = base_i + post(branch_i)       (post: RMSNorm ⊙ post_norm when post_norm is set (gemma), else
//                                         identity; the branch scaled as it is read: UnscaledRows)
//   row_i = RMSNorm(s_i) ⊙ norm          (norm null: s_i itself)
// and s_i, the stream after the add, is written to stream_out[i] as the row is computed. Without a
// branch (branch.y null) s_i is base_i and nothing is written. The arithmetic is ops::rmsnorm's and a
// plain f32 sum, in that order, so every reader gets the same bits: a quantizing backend computes
// each row inside its quantizing pass (runtime::ActivationSource, one row in cache, the normed rows
// never written whole); others call materialize().
// Computing a row again writes the same values (stream_out never overlaps base, checked; the branch
// is only read), so a call that reads its input twice is correct, only slower.
// Non-owning: every pointer is the caller's and must outlive the reads. Thread-safety: row() of
// distinct rows may run concurrently (each writes its own stream and output row).
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "model/unscaled_rows.h"

namespace ork::model {

struct ResidualNorm {
  const float* base = nullptr;  // rows × width: the stream before the add
  UnscaledRows branch;          // rows × width (branch.n == width); y null: no add pending
  const float* post_norm = nullptr;
  const float* norm = nullptr;  // width floats: the next linear's input norm weight; null: no norm
  float eps = 0;
  int64_t width = 0;
  float* stream_out = nullptr;  // rows × width: the stream after the add (set when branch.y is)
  // Where materialize() writes the rows (rows × width); may be branch.y itself (each branch row is read
  // before its output row is written), never base or stream_out.
  float* h = nullptr;
  ThreadPool* pool = nullptr;  // materialize()'s threads; null: the calling thread

  // Rows with nothing pending: row_i = RMSNorm(x_i) ⊙ norm.
  static ResidualNorm normed(const float* x, const float* norm, float eps, int64_t width, float* h,
                             ThreadPool* pool);
  // The stream the rows are computed from: stream_out when an add is pending, else base.
  const float* stream() const { return branch.y != nullptr ? stream_out : base; }
  // Row i into out (width floats; out may be branch row i, never a stream row), writing stream row i;
  // scratch: width floats. Unchecked: check() the description once before.
  void row(int64_t i, float* out, float* scratch) const;
  // Rows [0, m) into h, on the pool; returns h.
  const float* materialize(int64_t m) const { return materialize_into(m, h); }
  // Rows [0, m) into out (m × width; with h's contract), on the pool; returns out.
  const float* materialize_into(int64_t m, float* out) const;
  // ork::Error unless the description is consistent (widths, buffers set and not overlapping base).
  void check() const;
};

}  // namespace ork::model
