#include "npu/task_split_int4.h"

#include <algorithm>

#include "core/error.h"
#include "npu/layout_int4.h"
#include "npu/regcmd_gen.h"
#include "npu/regcmd_int4.h"

namespace ork::npu {

namespace {

uint64_t a_block_offset_i4(const SplitPlan& p, int64_t m0, int64_t seg) {
  return uint64_t(seg) * uint64_t(p.m) * uint64_t(p.kseg) / 2 +
         uint64_t(m0) * uint64_t(plan_segment_width(p, seg)) / 2;
}

}  // namespace

SplitPlan plan_split_i4(int64_t m, int64_t k, int64_t n, uint32_t max_cores, int64_t layout_np) {
  check_dims(m, k, n, "plan_split_i4");
  ORK_CHECK(max_cores >= 1 && max_cores <= 3, "plan_split_i4: cores = ", max_cores, " (1..3)");
  SplitPlan p;
  p.dtype = Dtype::kI4;
  p.m = m, p.k = k, p.n = n;
  p.mp = m, p.kp = pad_k(k), p.np = pad_n_i4(n);
  p.kseg = kI4KChunk;
  ORK_CHECK(layout_np == 0 || (layout_np >= p.np && layout_np % kI4NGroup == 0), "plan_split_i4: ", n,
            " rows of a packed layout of ", layout_np);
  const int64_t b_np = layout_np != 0 ? layout_np : p.np;
  p.segments = i4_k_chunks(p.kp, p.kseg);
  p.mt = std::min<int64_t>(m, kI4MaxTaskM);
  p.a_bytes = uint64_t(m) * uint64_t(p.kp) / 2;

  uint64_t c_off = 0;
  for_each_core_tile(p, kI4NGroup, max_cores, [&](uint32_t core, int64_t seg, int64_t kc, int64_t n0, int64_t nt) {
    for (int64_t m0 = 0; m0 < m; m0 += p.mt) {
      TaskTile t;
      t.core = core;
      t.m0 = m0;
      t.mt = std::min(p.mt, m - m0);
      t.n0 = n0, t.nt = nt, t.seg = seg, t.ks = kc;
      t.a_off = a_block_offset_i4(p, m0, seg);
      t.b_off = uint64_t(i4_chunk_offset(seg, b_np, p.kseg)) + uint64_t(n0) * uint64_t(kc) / 2;
      t.c_off = c_off;
      c_off += uint64_t(t.mt) * uint64_t(nt) * 2;
      p.tasks.push_back(t);
    }
  });
  p.c_bytes = c_off;
  return p;
}

void pack_a_for_plan_i4(const SplitPlan& p, const int8_t* a, uint8_t* dst) {
  ORK_CHECK(p.dtype == Dtype::kI4, "pack_a_for_plan_i4: a ", dtype_name(p.dtype), " plan");
  for (int64_t s = 0; s < p.segments; ++s) {
    const int64_t k0 = s * p.kseg, kc = plan_segment_width(p, s);
    const int64_t cols = std::clamp<int64_t>(p.k - k0, 0, kc);
    for (int64_t m0 = 0; m0 < p.m; m0 += p.mt) {
      const int64_t mt = std::min(p.mt, p.m - m0);
      pack_a_i4(a + m0 * p.k, p.k, k0, mt, cols, mt, kc, dst + a_block_offset_i4(p, m0, s));
    }
  }
}

void unpack_c_for_plan_i4(const SplitPlan& p, const uint8_t* src, int32_t* c) {
  ORK_CHECK(p.dtype == Dtype::kI4, "unpack_c_for_plan_i4: a ", dtype_name(p.dtype), " plan");
  for (int64_t s = 0; s < p.segments; ++s) {
    for (const TaskTile& t : p.tasks) {
      if (t.seg != s || t.n0 >= p.n) continue;
      const int64_t cols = std::min<int64_t>(p.n - t.n0, t.nt);
      unpack_c_i16(reinterpret_cast<const int16_t*>(src + t.c_off), t.mt, t.mt, cols, c + t.m0 * p.n + t.n0, p.n,
                   /*accumulate=*/s > 0);
    }
  }
}

}  // namespace ork::npu
