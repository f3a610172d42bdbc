#include "npu/matmul.h"

#include <algorithm>
#include <cstring>

#include "core/checked.h"
#include "core/error.h"
#include "npu/regcmd_gen.h"
#include "npu/registers.h"
#include "npu/task_split_int4.h"

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
  build_job(single_part_job(plan), JobAddresses{addr.a, addr.c, addr.regcmd, {addr.b}}, regcmd_host, tasks);
}

uapi::Submit make_submit(const SplitPlan& plan, uint64_t task_obj_addr, uint32_t domain) {
  return make_job_submit(single_part_job(plan), task_obj_addr, domain);
}

void pack_a_for_plan(const SplitPlan& p, const void* a, uint8_t* dst) {
  if (p.dtype == Dtype::kI4) return pack_a_for_plan_i4(p, static_cast<const int8_t*>(a), dst);
  const int64_t elt = elt_bytes(p.dtype);
  const uint8_t* src = static_cast<const uint8_t*>(a);
  const int64_t tiles = (p.mp + p.mt - 1) / p.mt;
  for (int64_t s = 0; s < p.segments; ++s) {
    const int64_t k0 = s * p.kseg, ks = plan_segment_width(p, s);
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
  if (p.dtype == Dtype::kI4) return unpack_c_for_plan_i4(p, src, static_cast<int32_t*>(c));
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
  if (d.arena) return d.arena.size() + d.tasks.size() + d.plan_tasks.size();
  return d.a.size() + d.c.size() + d.regcmd.size() + d.tasks.size() + d.plan_regcmd.size() + d.plan_tasks.size();
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
  return page_at_least(need.a) + page_at_least(need.c) + page_at_least(need.regcmd) +
         (need.plan_tasks > 0 ? page_at_least(need.plan_regcmd_bytes()) : 0);
}

uint64_t MatmulScratch::caller_bytes_placed(uint32_t domain) const {
  auto it = domains_.find(domain);
  return it != domains_.end() && it->second.arena ? it->second.arena.size() : 0;
}

bool MatmulScratch::in_caller_memory(uint32_t domain) const {
  auto it = domains_.find(domain);
  return it != domains_.end() && it->second.arena;
}

ScratchNeed MatmulScratch::capacity(uint32_t domain) const {
  auto it = domains_.find(domain);
  if (it == domains_.end()) return {};
  const Domain& d = it->second;
  return {d.a.size(), d.c.size(), d.regcmd.size(), d.tasks.size(), d.plan_capacity};
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
  std::pair<uint64_t, int> order[] = {{page_at_least(need.a), 0},
                                      {page_at_least(need.c), 1},
                                      {page_at_least(need.regcmd), 2},
                                      {need.plan_tasks > 0 ? page_at_least(need.plan_regcmd_bytes()) : 0, 3}};
  std::stable_sort(std::begin(order), std::end(order), [](auto x, auto y) { return x.first > y.first; });
  Buffer* b[] = {&d.a, &d.c, &d.regcmd, &d.plan_regcmd};
  uint64_t offset = 0;
  for (const auto& [bytes, which] : order) {
    if (bytes == 0) continue;
    *b[which] = arena.view(offset, bytes);
    offset += bytes;
  }
  d.arena = std::move(arena);
  ++d.generation;
  d.slot_valid = false;
  d.forget_jobs();
  // The plan cache's task entries stay ork's, as the slot's task array does.
  if (need.plan_tasks > 0) d.plan_tasks = dev_->alloc(need.plan_task_bytes(), domain, kTaskBufferFlags);
  d.plan_capacity = need.plan_tasks;
}

void ScratchNeed::merge(const ScratchNeed& o) {
  a = std::max(a, o.a);
  c = std::max(c, o.c);
  regcmd = std::max(regcmd, o.regcmd);
  tasks = std::max(tasks, o.tasks);
  plan_tasks = std::max(plan_tasks, o.plan_tasks);
}

uint64_t iova_slot_bytes(uint64_t bytes) {
  const uint64_t v = align_up(std::max<uint64_t>(bytes, 1), 4096);
  uint64_t p = 4096;
  while (p < v) p <<= 1;
  return p;
}

uint64_t matmul_tasks(int64_t m, int64_t k, int64_t n, Dtype d, uint32_t cores) {
  return plan_split(m, k, n, d, std::clamp<uint32_t>(cores, 1, 3)).tasks.size();
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
  const uint64_t a_was = d.a.iova(), c_was = d.c.iova();
  for (const auto& [bytes, which] : order) {
    Buffer* b[] = {&d.a, &d.c, &d.regcmd, &d.tasks};
    ensure(*dev_, *b[which], bytes, domain, which == 3 ? kTaskBufferFlags : kDefaultBufferFlags,
           fixed && which != 3, kWhat[which]);
  }
  if (d.a.iova() != a_was || d.c.iova() != c_was) ++d.generation;
  d.slot_valid = false;
  if (need.plan_tasks > d.plan_capacity) {
    if (fixed && need.plan_regcmd_bytes() > d.plan_regcmd.size()) {
      fail("matmul scratch in caller memory, IOMMU domain ", domain, ": the plan cache needs ",
           need.plan_regcmd_bytes(), " bytes of register commands, ", d.plan_regcmd.size(),
           " placed (size the memory from the plan's internal memory bytes)");
    }
    d.forget_jobs();
    d.plan_tasks.reset();
    if (!fixed) {
      d.plan_regcmd.reset();
      d.plan_regcmd = dev_->alloc(need.plan_regcmd_bytes(), domain, kDefaultBufferFlags);
    }
    d.plan_tasks = dev_->alloc(need.plan_task_bytes(), domain, kTaskBufferFlags);
    d.plan_capacity = need.plan_tasks;
  }
}

size_t MatmulScratch::plan_cache_jobs(uint32_t domain) const {
  auto it = domains_.find(domain);
  return it == domains_.end() ? 0 : it->second.jobs.size();
}

PackedWeight rows_view(const PackedWeight& w, int64_t n1) {
  ORK_CHECK(w.buf, "rows_view: the weight has no device buffer");
  ORK_CHECK(n1 > 0 && n1 < w.n && n1 % b_n_group(w.dtype) == 0, "rows_view: ", n1, " rows of a ", w.n,
            "-row weight (a multiple of ", b_n_group(w.dtype), " below ", w.n, ")");
  PackedWeight v;
  v.buf = w.buf.view(0, w.buf.size());
  v.n = n1, v.k = w.k, v.dtype = w.dtype;
  v.layout_np = w.layout_np != 0 ? w.layout_np : pad_n(w.n, w.dtype);
  return v;
}

void run_matmul(Device& dev, MatmulScratch& scratch, const PackedWeight& w, const void* a, int64_t m,
                void* c, uint32_t max_cores) {
  const PackedWeight* ws[] = {&w};
  void* cs[] = {c};
  run_matmul_group(dev, scratch, ws, a, m, cs, max_cores);
}

void run_matmul_group(Device& dev, MatmulScratch& scratch, std::span<const PackedWeight* const> ws,
                      const void* a, int64_t m, std::span<void* const> c, uint32_t max_cores) {
  ORK_CHECK(!ws.empty() && ws.size() == c.size(), "matmul: ", ws.size(), " weights and ", c.size(), " outputs");
  ORK_CHECK(a != nullptr, "matmul: null A");
  ORK_CHECK(&dev == scratch.dev_, "matmul: scratch belongs to another device");
  const PackedWeight& w0 = *ws[0];
  for (size_t i = 0; i < ws.size(); ++i) {
    ORK_CHECK(ws[i] != nullptr && ws[i]->buf, "matmul: weight ", i, " has no device buffer (freed?)");
    ORK_CHECK(c[i] != nullptr, "matmul: null C");
    ORK_CHECK(ws[i]->k == w0.k && ws[i]->dtype == w0.dtype && ws[i]->domain() == w0.domain(),
              "matmul group: weight ", i, " differs from weight 0 in K, dtype or IOMMU domain");
    check_dims(m, ws[i]->k, ws[i]->n, "matmul");
  }
  uint32_t cores = std::clamp<uint32_t>(dev.caps().cores, 1, 3);
  if (max_cores != 0) cores = std::min(cores, max_cores);
  const uint32_t domain = w0.domain();
  MatmulScratch::Domain& d = scratch.domains_[domain];
  MatmulScratch::Key key{d.generation, m, w0.k, w0.dtype, cores, {}};
  for (const PackedWeight* w : ws) {
    key.weights.push_back(w->buf.iova());
    key.weights.push_back(uint64_t(w->n));
    key.weights.push_back(uint64_t(w->layout_np));
  }
  const JobPlan* plan = nullptr;
  const Buffer* tasks = nullptr;
  uint64_t first_task = 0;
  auto hit = d.jobs.find(key);
  if (hit != d.jobs.end()) {
    plan = &hit->second.plan;
    tasks = &d.plan_tasks;
    first_task = hit->second.first_task;
    ++scratch.plan_hits_;
  } else if (d.slot_valid && d.slot_key == key) {
    plan = &d.slot_plan;
    tasks = &d.tasks;
    ++scratch.plan_hits_;
  } else {
    std::vector<int64_t> ns, layout_nps;
    for (const PackedWeight* w : ws) {
      ns.push_back(w->n);
      layout_nps.push_back(w->layout_np);
    }
    JobPlan job = plan_job(m, w0.k, ns, w0.dtype, cores, layout_nps);
    const bool fixed = bool(d.arena);
    const uint64_t a_was = d.a.iova(), c_was = d.c.iova();
    ensure(dev, d.a, job.a_bytes, domain, kDefaultBufferFlags, fixed, "A");
    ensure(dev, d.c, job.c_bytes, domain, kDefaultBufferFlags, fixed, "C");
    if (d.a.iova() != a_was || d.c.iova() != c_was) {
      ++d.generation;  // every generated job pointed at the old A or C
      d.forget_jobs();
      d.slot_valid = false;
      key.generation = d.generation;
    }
    const uint64_t capacity = d.plan_capacity;
    const uint64_t n_tasks = job.tasks();
    if (n_tasks <= capacity && d.used_tasks + n_tasks > capacity) {  // full: start over
      d.forget_jobs();
    }
    JobAddresses addr{d.a.iova(), d.c.iova(), 0, {}};
    for (const PackedWeight* w : ws) addr.b.push_back(w->buf.iova());
    Buffer* regcmd = nullptr;
    Buffer* task_buf = nullptr;
    if (n_tasks <= capacity) {
      first_task = d.used_tasks;
      d.used_tasks += n_tasks;
      MatmulScratch::Job& cached = d.jobs[key];
      cached.plan = std::move(job);
      cached.first_task = first_task;
      plan = &cached.plan;
      regcmd = &d.plan_regcmd;
      task_buf = &d.plan_tasks;
    } else {
      ensure(dev, d.regcmd, job.regcmd_bytes(), domain, kDefaultBufferFlags, fixed, "the register commands");
      ensure(dev, d.tasks, job.task_array_bytes(), domain, kTaskBufferFlags);
      d.slot_plan = std::move(job);
      d.slot_key = key;
      d.slot_valid = true;
      plan = &d.slot_plan;
      regcmd = &d.regcmd;
      task_buf = &d.tasks;
    }
    const uint64_t regcmd_off = first_task * kRegcmdStride, task_off = first_task * sizeof(uapi::Task);
    addr.regcmd = regcmd->iova() + regcmd_off;
    build_job(*plan, addr, regcmd->host() + regcmd_off, reinterpret_cast<uapi::Task*>(task_buf->host() + task_off));
    regcmd->sync_to_device(regcmd_off, plan->regcmd_bytes());
    task_buf->sync_to_device(task_off, plan->task_array_bytes());
    tasks = task_buf;
    ++scratch.plans_built_;
  }
  pack_a_for_plan(plan->parts[0], a, d.a.host());
  d.a.sync_to_device(0, plan->a_bytes);
  uapi::Submit s = make_job_submit(*plan, tasks->obj_addr(), domain, uint32_t(first_task));
  dev.submit(s);
  d.c.sync_from_device(0, plan->c_bytes);
  for (size_t i = 0; i < ws.size(); ++i) unpack_job_c(*plan, i, d.c.host(), c[i]);
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
