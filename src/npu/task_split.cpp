#include "npu/task_split.h"

#include <algorithm>

#include "core/error.h"
#include "npu/regcmd_gen.h"
#include "npu/registers.h"
#include "npu/task_split_int4.h"
#include "npu/layout_int4.h"

namespace ork::npu {

uint64_t SplitPlan::macs() const {
  uint64_t s = 0;
  for (const TaskTile& t : tasks) s += uint64_t(t.mt) * uint64_t(t.nt) * uint64_t(t.ks);
  return s;
}

uint64_t a_block_offset(const SplitPlan& p, int64_t tile, int64_t seg) {
  // Segment-major: all m-tiles of segment 0, then segment 1, … Full segments are k_segment_width wide,
  // and every m-tile but the last is mt rows.
  const uint64_t elt = uint64_t(elt_bytes(p.dtype));
  const uint64_t seg_bytes = uint64_t(p.mp) * uint64_t(p.kseg) * elt;
  const uint64_t ks = uint64_t(plan_segment_width(p, seg));
  return uint64_t(seg) * seg_bytes + uint64_t(tile) * uint64_t(p.mt) * ks * elt;
}

int64_t plan_segment_width(const SplitPlan& p, int64_t s) {
  const int64_t rest = p.kp - s * p.kseg;
  return rest < p.kseg ? rest : p.kseg;
}

SplitPlan plan_split(int64_t m, int64_t k, int64_t n, Dtype d, uint32_t max_cores, int64_t k_segment,
                     int64_t layout_np) {
  if (d == Dtype::kI4) {  // K chunks of 480, int16 results: its own rules (task_split_int4.h)
    ORK_CHECK(k_segment == 0, "plan_split: int4 matmuls have K chunks of ", kI4KChunk, " columns, not ", k_segment);
    return plan_split_i4(m, k, n, max_cores, layout_np);
  }
  check_dims(m, k, n, "plan_split");
  ORK_CHECK(max_cores >= 1 && max_cores <= 3, "plan_split: cores = ", max_cores, " (1..3)");
  ORK_CHECK(k_segment == 0 || (k_segment % kKAlign == 0 && k_segment >= kKAlign && k_segment <= kKSegmentMax),
            "plan_split: K segment ", k_segment, " is not a multiple of 32 in [32, ", kKSegmentMax, "]");
  SplitPlan p;
  p.dtype = d;
  p.m = m, p.k = k, p.n = n;
  p.mp = pad_m(m), p.kp = pad_k(k), p.np = pad_n(n, d);
  p.kseg = k_segment != 0 ? k_segment : k_segment_width(d);
  ORK_CHECK(layout_np == 0 || (layout_np >= p.np && layout_np % b_n_group(d) == 0), "plan_split: ", n,
            " rows of a packed layout of ", layout_np);
  const int64_t b_np = layout_np != 0 ? layout_np : p.np;
  p.segments = (p.kp + p.kseg - 1) / p.kseg;
  const int64_t widest = plan_segment_width(p, 0);
  p.mt = m == 1 ? 1 : std::min(p.mp, max_m_tile(d, widest));  // cbuf_budget.h
  const int64_t m_tiles = (p.mp + p.mt - 1) / p.mt;
  const uint64_t elt = uint64_t(elt_bytes(d));
  p.a_bytes = uint64_t(p.mp) * uint64_t(p.kp) * elt;

  // N ranges per core, in units of the kernel group.
  uint64_t c_off = 0;
  for_each_core_tile(p, b_n_group(d), max_cores, [&](uint32_t core, int64_t seg, int64_t ks, int64_t n0, int64_t nt) {
    for (int64_t i = 0; i < m_tiles; ++i) {
      TaskTile t;
      t.core = core;
      t.m0 = i * p.mt;
      t.mt = std::min(p.mt, p.mp - t.m0);
      t.n0 = n0, t.nt = nt, t.seg = seg, t.ks = ks;
      t.a_off = a_block_offset(p, i, seg);
      t.b_off = (uint64_t(b_np) * uint64_t(seg) * uint64_t(p.kseg) + uint64_t(n0) * uint64_t(ks)) * elt;
      t.c_off = c_off;
      c_off += uint64_t(t.mt) * uint64_t(nt) * 4;
      p.tasks.push_back(t);
    }
  });
  p.c_bytes = c_off;
  return p;
}

}  // namespace ork::npu
