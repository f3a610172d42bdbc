#include "npu/matmul.h"

#include <algorithm>
#include <cstring>

#include "core/checked.h"
#include "core/error.h"
#include "npu/regcmd_gen.h"
#include "npu/registers.h"

namespace ork::npu {

void pack_weight_into(const int8_t* b, int64_t n, int64_t k, uint8_t* dst) {
  pack_b(Dtype::kI8, b, n, k, dst);
}
void pack_weight_into_f16(const uint16_t* b, int64_t n, int64_t k, uint8_t* dst) {
  pack_b(Dtype::kF16, b, n, k, dst);
}

namespace {

PackedWeight alloc_weight(Device& dev, int64_t n, int64_t k, Dtype d, uint32_t domain) {
  PackedWeight w;
  w.n = n, w.k = k, w.dtype = d;
  w.buf = dev.alloc(packed_weight_bytes(n, k, d), domain);
  return w;
}

}  // namespace

PackedWeight pack_weight(Device& dev, const int8_t* b, int64_t n, int64_t k, uint32_t domain) {
  PackedWeight w = alloc_weight(dev, n, k, Dtype::kI8, domain);
  pack_b(Dtype::kI8, b, n, k, w.buf.host());
  w.buf.sync_to_device(0, packed_weight_bytes(n, k, Dtype::kI8));
  return w;
}

PackedWeight pack_weight_f16(Device& dev, const uint16_t* b, int64_t n, int64_t k, uint32_t domain) {
  PackedWeight w = alloc_weight(dev, n, k, Dtype::kF16, domain);
  pack_b(Dtype::kF16, b, n, k, w.buf.host());
  w.buf.sync_to_device(0, packed_weight_bytes(n, k, Dtype::kF16));
  return w;
}

PackedWeight load_packed_weight(Device& dev, const uint8_t* packed, int64_t n, int64_t k, Dtype d,
                                uint32_t domain) {
  PackedWeight w = alloc_weight(dev, n, k, d, domain);
  const uint64_t bytes = packed_weight_bytes(n, k, d);
  std::memcpy(w.buf.host(), packed, size_t(bytes));
  w.buf.sync_to_device(0, bytes);
  return w;
}

void build_tasks(const SplitPlan& plan, const TaskAddresses& addr, uint8_t* regcmd_host,
                 uapi::Task* tasks) {
  const size_t count = plan.tasks.size();
  std::vector<uint64_t> e(kMatmulEntries);
  for (size_t i = 0; i < count; ++i) {
    const TaskTile& t = plan.tasks[i];
    MatmulTaskDesc d;
    d.dtype = plan.dtype;
    d.m = uint32_t(t.mt), d.k = uint32_t(t.ks), d.n = uint32_t(t.nt);
    const uint64_t a = addr.a + t.a_off, b = addr.b + t.b_off, c = addr.c + t.c_off;
    ORK_CHECK(a < (uint64_t(1) << 32) && b < (uint64_t(1) << 32) && c < (uint64_t(1) << 32),
              "matmul task ", i, ": operand address above 4 GiB");
    d.a_addr = uint32_t(a), d.b_addr = uint32_t(b), d.c_addr = uint32_t(c);
    gen_matmul_regcmd(d, e.data());
    const uint64_t here = addr.regcmd + i * uint64_t(kRegcmdStride);
    const bool last_of_core =
        i + 1 == count || plan.tasks[i + 1].core != t.core;
    if (!last_of_core) {
      const uint64_t next = here + kRegcmdStride;
      ORK_CHECK(next < (uint64_t(1) << 32), "matmul task ", i, ": regcmd address above 4 GiB");
      chain_regcmd(e.data(), kMatmulEntries, uint32_t(next), kMatmulEntries);
    }
    std::memcpy(regcmd_host + i * kRegcmdStride, e.data(), kMatmulEntries * 8);
    std::memset(regcmd_host + i * kRegcmdStride + kMatmulEntries * 8, 0,
                kRegcmdStride - kMatmulEntries * 8);
    uapi::Task task{};
    task.flags = 0;
    task.op_idx = 0;
    task.enable_mask = reg::kTaskEnableMask;
    task.int_mask = reg::kTaskIntMask;
    task.int_clear = reg::kTaskIntClear;
    task.int_status = 0;
    task.regcfg_amount = kMatmulEntries - reg::kPcTailEntries;
    task.regcfg_offset = 0;
    task.regcmd_addr = here;
    std::memcpy(&tasks[i], &task, sizeof task);
  }
}

uapi::Submit make_submit(const SplitPlan& plan, uint64_t task_obj_addr, uint32_t domain) {
  uapi::Submit s{};
  s.flags = uapi::kJobPc | uapi::kJobPingpong;
  s.timeout = 6000;
  s.task_start = 0;
  s.task_number = uint32_t(plan.tasks.size());
  s.priority = 0;
  s.task_obj_addr = task_obj_addr;
  s.iommu_domain_id = domain;
  s.task_base_addr = 0;  // as mtx512's working submit; the driver reads tasks via task_obj_addr
  s.fence_fd = -1;
  static constexpr uint32_t kMasks[4] = {0, uapi::kCore0, uapi::kCore0 | uapi::kCore1,
                                         uapi::kCore0 | uapi::kCore1 | uapi::kCore2};
  s.core_mask = kMasks[plan.cores];
  for (uint32_t c = 0; c < plan.cores; ++c) {
    const uint32_t slot = plan.cores == 3 ? c + 2 : c;  // rknpu: 3 cores use subcore_task[2..4]
    s.subcore_task[slot].task_start = plan.core_start[c];
    s.subcore_task[slot].task_number = plan.core_count[c];
  }
  return s;
}

void pack_a_for_plan(const SplitPlan& p, const void* a, uint8_t* dst) {
  const int64_t elt = elt_bytes(p.dtype);
  const uint8_t* src = static_cast<const uint8_t*>(a);
  const int64_t tiles = (p.mp + p.mt - 1) / p.mt;
  for (int64_t s = 0; s < p.segments; ++s) {
    const int64_t k0 = s * kKSegment, ks = b_segment_width(s, p.kp);
    const int64_t cols = std::clamp<int64_t>(p.k - k0, 0, ks);
    for (int64_t i = 0; i < tiles; ++i) {
      const int64_t m0 = i * p.mt, mt = std::min(p.mt, p.mp - m0);
      const int64_t rows = std::clamp<int64_t>(p.m - m0, 0, mt);
      pack_a(p.dtype, src + (m0 * p.k + k0) * elt, p.k, rows, cols, mt, ks,
             dst + a_block_offset(p, i, s));
    }
  }
}

void unpack_c_for_plan(const SplitPlan& p, const uint8_t* src, void* c) {
  for (int64_t s = 0; s < p.segments; ++s) {
    for (const TaskTile& t : p.tasks) {
      if (t.seg != s) continue;
      const int64_t rows = std::clamp<int64_t>(p.m - t.m0, 0, t.mt);
      const int64_t cols = std::clamp<int64_t>(p.n - t.n0, 0, t.nt);
      if (p.dtype == Dtype::kI8) {
        unpack_c_i32(reinterpret_cast<const int32_t*>(src + t.c_off), t.mt, rows, cols,
                     static_cast<int32_t*>(c) + t.m0 * p.n + t.n0, p.n, s > 0);
      } else {
        unpack_c_f32(reinterpret_cast<const float*>(src + t.c_off), t.mt, rows, cols,
                     static_cast<float*>(c) + t.m0 * p.n + t.n0, p.n, s > 0);
      }
    }
  }
}

uint64_t MatmulScratch::bytes(uint32_t domain) const {
  auto it = domains_.find(domain);
  if (it == domains_.end()) return 0;
  const Domain& d = it->second;
  if (d.arena) return d.arena.size() + d.tasks.size();
  return d.a.size() + d.c.size() + d.regcmd.size() + d.tasks.size();
}

namespace {

constexpr uint64_t kPage = 4096;
uint64_t page_at_least(uint64_t b) { return std::max<uint64_t>(align_up(b, kPage), kPage); }

// Makes `b` at least `need` bytes in `domain`; releases the old buffer first so its IOVA is reusable.
// In caller memory (`fixed`) nothing is reallocated: a short view is an error.
void ensure(Device& dev, Buffer& b, uint64_t need, uint32_t domain, uint32_t flags, bool fixed = false,
            const char* what = "") {
  if (b && b.size() >= need) return;
  if (fixed) {
    fail("matmul scratch in caller memory, IOMMU domain ", domain, ": ", what, " needs ", need, " bytes, ",
         b.size(), " placed (size the memory from the plan's internal memory bytes)");
  }
  b.reset();
  b = dev.alloc(std::max<uint64_t>(need, kPage), domain, flags);
}

}  // namespace

uint64_t MatmulScratch::caller_bytes(const ScratchNeed& need) {
  return page_at_least(need.a) + page_at_least(need.c) + page_at_least(need.regcmd);
}

bool MatmulScratch::in_caller_memory(uint32_t domain) const {
  auto it = domains_.find(domain);
  return it != domains_.end() && it->second.arena;
}

ScratchNeed MatmulScratch::capacity(uint32_t domain) const {
  auto it = domains_.find(domain);
  if (it == domains_.end()) return {};
  const Domain& d = it->second;
  return {d.a.size(), d.c.size(), d.regcmd.size(), d.tasks.size()};
}

void MatmulScratch::place(uint32_t domain, const ScratchNeed& need, Buffer arena) {
  ORK_CHECK(arena, "matmul scratch in caller memory: no buffer for IOMMU domain ", domain);
  ORK_CHECK(arena.domain() == domain, "matmul scratch in caller memory: the buffer is in IOMMU domain ",
            arena.domain(), ", not ", domain);
  const uint64_t total = caller_bytes(need);
  ORK_CHECK(arena.size() >= total, "matmul scratch in caller memory, IOMMU domain ", domain, ": needs ", total,
            " bytes, ", arena.size(), " given");
  auto it = domains_.find(domain);
  ORK_CHECK(it == domains_.end() || (!it->second.a && !it->second.c && !it->second.regcmd && !it->second.tasks),
            "matmul scratch of IOMMU domain ", domain, " already holds buffers");
  Domain& d = domains_[domain];
  // Largest first at page-aligned offsets, as reserve() orders its allocations.
  std::pair<uint64_t, int> order[] = {{page_at_least(need.a), 0}, {page_at_least(need.c), 1},
                                      {page_at_least(need.regcmd), 2}};
  std::stable_sort(std::begin(order), std::end(order), [](auto x, auto y) { return x.first > y.first; });
  Buffer* b[] = {&d.a, &d.c, &d.regcmd};
  uint64_t offset = 0;
  for (const auto& [bytes, which] : order) {
    *b[which] = arena.view(offset, bytes);
    offset += bytes;
  }
  d.arena = std::move(arena);
  d.valid = false;
}

void ScratchNeed::merge(const ScratchNeed& o) {
  a = std::max(a, o.a);
  c = std::max(c, o.c);
  regcmd = std::max(regcmd, o.regcmd);
  tasks = std::max(tasks, o.tasks);
}

ScratchNeed scratch_need(int64_t m, int64_t k, int64_t n, Dtype d, uint32_t cores) {
  const SplitPlan p = plan_split(m, k, n, d, std::clamp<uint32_t>(cores, 1, 3));
  const uint64_t ntasks = p.tasks.size();
  return {std::max<uint64_t>(p.a_bytes, 4096), std::max<uint64_t>(p.c_bytes, 4096),
          std::max<uint64_t>(ntasks * kRegcmdStride, 4096),
          std::max<uint64_t>(ntasks * sizeof(uapi::Task), 4096)};
}

void MatmulScratch::reserve(uint32_t domain, const ScratchNeed& need) {
  Domain& d = domains_[domain];
  // Largest first, so the aligned IOVA slots pack densely.
  std::pair<uint64_t, int> order[] = {{need.a, 0}, {need.c, 1}, {need.regcmd, 2}, {need.tasks, 3}};
  std::sort(std::begin(order), std::end(order), [](auto x, auto y) { return x.first > y.first; });
  const bool fixed = bool(d.arena);
  static constexpr const char* kWhat[] = {"A", "C", "the register commands", "the task array"};
  for (const auto& [bytes, which] : order) {
    Buffer* b[] = {&d.a, &d.c, &d.regcmd, &d.tasks};
    ensure(*dev_, *b[which], bytes, domain, which == 3 ? kTaskBufferFlags : kDefaultBufferFlags,
           fixed && which != 3, kWhat[which]);
  }
  d.valid = false;
}

void run_matmul(Device& dev, MatmulScratch& scratch, const PackedWeight& w, const void* a, int64_t m,
                void* c, uint32_t max_cores) {
  ORK_CHECK(w.buf, "matmul: the weight has no device buffer (freed?)");
  ORK_CHECK(a != nullptr && c != nullptr, "matmul: null A or C");
  ORK_CHECK(&dev == scratch.dev_, "matmul: scratch belongs to another device");
  check_dims(m, w.k, w.n, "matmul");
  uint32_t cores = std::clamp<uint32_t>(dev.caps().cores, 1, 3);
  if (max_cores != 0) cores = std::min(cores, max_cores);
  const uint32_t domain = w.domain();
  MatmulScratch::Domain& d = scratch.domains_[domain];
  const MatmulScratch::Key key{w.buf.iova(), m, w.k, w.n, w.dtype, cores};
  if (!d.valid || !(d.key == key)) {
    d.valid = false;
    d.plan = plan_split(m, w.k, w.n, w.dtype, cores);
    const uint64_t ntasks = d.plan.tasks.size();
    const bool fixed = bool(d.arena);
    ensure(dev, d.a, d.plan.a_bytes, domain, kDefaultBufferFlags, fixed, "A");
    ensure(dev, d.c, d.plan.c_bytes, domain, kDefaultBufferFlags, fixed, "C");
    ensure(dev, d.regcmd, ntasks * kRegcmdStride, domain, kDefaultBufferFlags, fixed, "the register commands");
    ensure(dev, d.tasks, ntasks * sizeof(uapi::Task), domain, kTaskBufferFlags);
    TaskAddresses addr{d.a.iova(), w.buf.iova(), d.c.iova(), d.regcmd.iova()};
    build_tasks(d.plan, addr, d.regcmd.host(), reinterpret_cast<uapi::Task*>(d.tasks.host()));
    d.regcmd.sync_to_device(0, ntasks * kRegcmdStride);
    d.tasks.sync_to_device(0, ntasks * sizeof(uapi::Task));
    d.key = key;
    d.valid = true;
    ++scratch.plans_built_;
  }
  pack_a_for_plan(d.plan, a, d.a.host());
  d.a.sync_to_device(0, d.plan.a_bytes);
  uapi::Submit s = make_submit(d.plan, d.tasks.obj_addr(), domain);
  dev.submit(s);
  d.c.sync_from_device(0, d.plan.c_bytes);
  unpack_c_for_plan(d.plan, d.c.host(), c);
}

void matmul_i8(Device& dev, MatmulScratch& scratch, const PackedWeight& w, const int8_t* a, int64_t m,
               int32_t* c, uint32_t max_cores) {
  ORK_CHECK(w.dtype == Dtype::kI8, "matmul_i8: the weight is ", dtype_name(w.dtype));
  run_matmul(dev, scratch, w, a, m, c, max_cores);
}

void matmul_f16(Device& dev, MatmulScratch& scratch, const PackedWeight& w, const uint16_t* a,
                int64_t m, float* c, uint32_t max_cores) {
  ORK_CHECK(w.dtype == Dtype::kF16, "matmul_f16: the weight is ", dtype_name(w.dtype));
  run_matmul(dev, scratch, w, a, m, c, max_cores);
}

}  // namespace ork::npu
