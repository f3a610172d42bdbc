#include "npu/matmul_int4.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "npu/layout.h"
#include "npu/layout_int4.h"
#include "npu/regcmd_gen.h"
#include "npu/regcmd_int4.h"
#include "npu/registers.h"

namespace ork::npu {

Int4Plan plan_int4(int64_t m, int64_t k, int64_t n, int64_t chunk) {
  check_dims(m, k, n, "plan_int4");
  check_i4_chunk(chunk);
  Int4Plan p;
  p.m = m, p.k = k, p.n = n, p.kp = pad_k(k), p.np = pad_n_i4(n);
  p.chunk = chunk;
  const int64_t chunks = p.chunks = i4_k_chunks(p.kp, chunk);
  uint64_t a_off = 0;
  for (int64_t m0 = 0; m0 < m; m0 += kI4MaxTaskM) {
    const int64_t mt = std::min<int64_t>(kI4MaxTaskM, m - m0);
    const uint64_t a_tile = a_off;  // the M tile's K-chunk blocks, chunk after chunk
    for (int64_t c = 0; c < chunks; ++c) a_off += uint64_t(mt) * i4_chunk_width(c, p.kp, chunk) / 2;
    for (int64_t n0 = 0; n0 < p.np; n0 += kMaxTaskN) {
      const int64_t nt = std::min<int64_t>(kMaxTaskN, p.np - n0);
      uint64_t a_chunk = a_tile;
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t kc = i4_chunk_width(c, p.kp, chunk);
        Int4Task t;
        t.m0 = uint32_t(m0), t.mt = uint32_t(mt), t.k0 = uint32_t(i4_chunk_first(c, chunk)), t.kc = uint32_t(kc);
        t.n0 = uint32_t(n0), t.nt = uint32_t(nt);
        t.a_off = a_chunk;
        t.b_off = uint64_t(i4_chunk_offset(c, p.np, chunk)) + uint64_t(n0) * kc / 2;
        t.c_off = p.c_bytes;
        p.c_bytes += uint64_t(mt) * nt * 2;
        a_chunk += uint64_t(mt) * kc / 2;
        p.tasks.push_back(t);
      }
    }
  }
  p.a_bytes = a_off;
  return p;
}

void pack_a_for_int4_plan(const Int4Plan& plan, const int8_t* codes, uint8_t* a_scratch, bool swap_nibbles) {
  for (const Int4Task& t : plan.tasks) {
    if (t.n0 != 0) continue;  // N tiles of an M tile share its A blocks
    const int64_t cols = std::max<int64_t>(0, std::min<int64_t>(t.kc, plan.k - t.k0));
    pack_a_i4(codes + int64_t(t.m0) * plan.k, plan.k, t.k0, t.mt, cols, t.mt, t.kc, a_scratch + t.a_off,
              swap_nibbles);
  }
}

void reduce_int4_plan(const Int4Plan& plan, const uint8_t* c_scratch, int32_t* c) {
  for (const Int4Task& t : plan.tasks) {
    if (int64_t(t.n0) >= plan.n) continue;
    const int64_t cols = std::min<int64_t>(t.nt, plan.n - t.n0);
    unpack_c_i16(reinterpret_cast<const int16_t*>(c_scratch + t.c_off), t.mt, t.mt, cols,
                 c + int64_t(t.m0) * plan.n + t.n0, plan.n, /*accumulate=*/t.k0 != 0);
  }
}

void reduce_int4_plan_chunks(const Int4Plan& plan, const uint8_t* c_scratch, int32_t* c) {
  for (const Int4Task& t : plan.tasks) {
    if (int64_t(t.n0) >= plan.n) continue;
    const int64_t cols = std::min<int64_t>(t.nt, plan.n - t.n0);
    const int64_t g = t.k0 / plan.chunk;
    unpack_c_i16(reinterpret_cast<const int16_t*>(c_scratch + t.c_off), t.mt, t.mt, cols,
                 c + (g * plan.m + t.m0) * plan.n + t.n0, plan.n, /*accumulate=*/false);
  }
}

namespace {

// Runs `plan` on core 0 and leaves the C scratch synced for the host; returns it.
Buffer run_plan(Device& dev, const Buffer& weight, const Int4Plan& plan, const int8_t* a_codes) {
  const int64_t k = plan.k, n = plan.n;
  ORK_CHECK(weight.size() >= packed_weight_bytes_i4(n, k), "matmul_i4: the weight buffer holds ", weight.size(),
            " bytes, a packed ", n, "×", k, " int4 weight needs ", packed_weight_bytes_i4(n, k));
  const uint32_t domain = weight.domain();
  const size_t count = plan.tasks.size();
  Buffer a = dev.alloc(plan.a_bytes, domain);
  Buffer cs = dev.alloc(plan.c_bytes, domain);
  Buffer regcmd = dev.alloc(count * kRegcmdStride, domain);
  Buffer tasks = dev.alloc(count * sizeof(uapi::Task), domain, kTaskBufferFlags);
  pack_a_for_int4_plan(plan, a_codes, a.host());
  for (size_t j = 0; j < count; ++j) {
    const Int4Task& t = plan.tasks[j];
    Int4TaskDesc d;
    d.m = t.mt, d.k = t.kc, d.n = t.nt;
    const uint64_t addr_a = a.iova() + t.a_off, addr_b = weight.iova() + t.b_off, addr_c = cs.iova() + t.c_off;
    ORK_CHECK(addr_a < (uint64_t(1) << 32) && addr_b < (uint64_t(1) << 32) && addr_c < (uint64_t(1) << 32),
              "matmul_i4: an operand lies above 4 GiB");
    d.a_addr = uint32_t(addr_a), d.b_addr = uint32_t(addr_b), d.c_addr = uint32_t(addr_c);
    uint64_t e[kMatmulEntries];
    gen_matmul_regcmd_i4(d, e);
    const uint64_t here = regcmd.iova() + j * kRegcmdStride;
    if (j + 1 < count) chain_regcmd(e, kMatmulEntries, uint32_t(here + kRegcmdStride), kMatmulEntries);
    uint8_t* dst = regcmd.host() + j * kRegcmdStride;
    std::memcpy(dst, e, sizeof e);
    std::memset(dst + sizeof e, 0, kRegcmdStride - sizeof e);
    uapi::Task task{};
    task.enable_mask = reg::kTaskEnableMask;
    task.int_mask = reg::kTaskIntMask;
    task.int_clear = reg::kTaskIntClear;
    task.regcfg_amount = kMatmulEntries - reg::kPcTailEntries;
    task.regcmd_addr = here;
    std::memcpy(tasks.host() + j * sizeof task, &task, sizeof task);
  }
  a.sync_to_device();
  regcmd.sync_to_device();
  tasks.sync_to_device();
  uapi::Submit s{};
  s.flags = uapi::kJobPc | uapi::kJobPingpong;
  s.timeout = 6000;
  s.task_number = uint32_t(count);
  s.task_obj_addr = tasks.obj_addr();
  s.iommu_domain_id = domain;
  s.fence_fd = -1;
  s.core_mask = uapi::kCore0;
  s.subcore_task[0].task_start = 0;
  s.subcore_task[0].task_number = uint32_t(count);
  dev.submit(s);
  cs.sync_from_device();
  return cs;
}

}  // namespace

void matmul_i4(Device& dev, const Buffer& weight, const int8_t* a_codes, int64_t m, int64_t k, int64_t n,
               int32_t* c) {
  const Int4Plan plan = plan_int4(m, k, n);
  const Buffer cs = run_plan(dev, weight, plan, a_codes);
  reduce_int4_plan(plan, cs.host(), c);
}

void matmul_i4_chunks(Device& dev, const Buffer& weight, const int8_t* a_codes, int64_t m, int64_t k, int64_t n,
                      int64_t chunk, int32_t* c_chunks) {
  const Int4Plan plan = plan_int4(m, k, n, chunk);
  const Buffer cs = run_plan(dev, weight, plan, a_codes);
  reduce_int4_plan_chunks(plan, cs.host(), c_chunks);
}

}  // namespace ork::npu
