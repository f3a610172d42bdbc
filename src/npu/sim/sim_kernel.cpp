#include "npu/sim/sim_kernel.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

#include "core/checked.h"
#include "core/error.h"
#include "core/log.h"
#include "npu/sim/executor.h"
#include "npu/sim/job_failure.h"

namespace ork::npu::sim {

namespace {

constexpr uint64_t kPage = IovaAllocator::kPageBytes;
// obj_addr is a kernel cookie on the board (a kernel pointer); the simulator hands out fake kernel
// addresses that encode the handle, so that a stale or made-up cookie is recognisable.
constexpr uint64_t kObjBase = 0xffffff8000000000ull;
constexpr uint64_t kObjStride = 0x200;
// MEM_MAP offsets: one 4 GiB slot per handle (a buffer is at most 4 GiB).
constexpr uint64_t kMapOffsetStride = uint64_t(1) << 32;
constexpr uint32_t kKnownMemFlags = (uapi::kMemIommuLimitIovaAlignment << 1) - 1;

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Index into subcore_task[] of core `core` for a job on `mask`: with all three cores core i reads
// subcore_task[i + 2], with one or two (and AUTO, which becomes one), subcore_task[i].
uint32_t subcore_index(uint32_t mask, uint32_t core) { return mask == 7 ? core + 2 : core; }

// rknpu_schedule_core_index: the core with the fewest queued tasks, the lowest index on a tie. The
// simulator runs one job at a time, so every queue is empty when a job is scheduled.
uint32_t schedule_auto_core(const std::array<uint64_t, 3>& queued, uint32_t cores) {
  uint32_t best = 0;
  for (uint32_t i = 1; i < cores; ++i)
    if (queued[best] > queued[i]) best = i;
  return best;
}

bool fits(uint64_t start, uint64_t count, uint64_t element, uint64_t capacity_bytes) {
  uint64_t end = 0, bytes = 0;
  if (__builtin_add_overflow(start, count, &end)) return false;
  if (__builtin_mul_overflow(end, element, &bytes)) return false;
  return bytes <= capacity_bytes;
}

}  // namespace

// The active domain's view of memory, handed to the executor for one submit.
class SimKernel::ActiveSpace final : public AddressSpace {
 public:
  ActiveSpace(SimKernel& k, uint32_t domain) : k_(k), domain_(domain) {}

  uint8_t* resolve(uint64_t iova, uint64_t length) override {
    const Domain& d = *k_.domains_[domain_];
    if (const SimBuffer* b = containing(d, iova)) {
      const uint64_t off = iova - b->iova;
      if (length <= b->size - off) return b->host + off;
      throw Fault(iova, length,
                  str_cat("task access of ", length, " bytes at ", hex(iova), " runs past the end of the buffer ",
                          hex(b->iova), "+", b->size, " in domain ", domain_));
    }
    std::string elsewhere;
    for (uint32_t other = 0; other < uapi::kMaxDomains; ++other) {
      if (other == domain_ || !k_.domains_[other]) continue;
      if (containing(*k_.domains_[other], iova)) {
        elsewhere = str_cat(" (mapped in domain ", other, ", which is not the active domain)");
        break;
      }
    }
    throw Fault(iova, length,
                str_cat("task touched unmapped address ", hex(iova), " in domain ", domain_, elsewhere));
  }

 private:
  const SimBuffer* containing(const Domain& d, uint64_t iova) const {
    auto it = d.by_iova.upper_bound(iova);
    if (it == d.by_iova.begin()) return nullptr;
    --it;
    const SimBuffer& b = k_.buffers_.at(it->second);
    return iova - b.iova < b.size ? &b : nullptr;
  }

  SimKernel& k_;
  uint32_t domain_;
};

SimKernel::SimKernel(const SimOptions& options) : options_(options) {
  ORK_CHECK(options.window_bytes % kPage == 0 && options.window_bytes >= kMinWindowBytes &&
                options.window_bytes <= (uint64_t(1) << 32),
            "simulated NPU window_bytes ", options.window_bytes,
            ": must be a multiple of 4096 in [1 MiB, 4 GiB]");
  ORK_CHECK(options.domains >= 1 && options.domains <= uapi::kMaxDomains, "simulated NPU domains ",
            options.domains, ": must be in [1, 16]");
  ORK_CHECK(options.cores >= 1 && options.cores <= 3, "simulated NPU cores ", options.cores,
            ": must be in [1, 3]");
  domain(0);  // the default domain exists from the start
}

SimKernel::~SimKernel() {
  const SimLeakReport leaked = close();
  if (leaked.buffers != 0) {
    log::debug("sim NPU closed with ", leaked.buffers, " buffers (", leaked.bytes, " bytes) never destroyed");
  }
}

SimLeakReport SimKernel::close() {
  std::lock_guard lock(mutex_);
  SimLeakReport report;
  for (auto& [handle, b] : buffers_) {
    report.buffers++;
    report.bytes += b.size;
    account_unmapped(b);
    release(b);
  }
  buffers_.clear();
  closed_ = true;
  return report;
}

SimKernel::Domain& SimKernel::domain(uint32_t id) {
  if (!domains_[id]) {
    domains_[id] = std::make_unique<Domain>(options_.window_bytes);
    stats_.domains[id].created = true;
  }
  return *domains_[id];
}

void SimKernel::switch_to(uint32_t id) {
  domain(id);
  if (id != stats_.active_domain) {
    stats_.active_domain = id;
    stats_.domain_switches++;
    // Modeled where it happens: the driver switches in whichever ioctl names the other domain (a
    // sync of the job's input before its submit, usually), not only in the submit.
    stats_.modeled_ns += options_.board.domain_switch_us * 1e3;
  }
}

SimKernel::SimBuffer* SimKernel::find_by_obj(uint64_t obj_addr) {
  if (obj_addr < kObjBase || (obj_addr - kObjBase) % kObjStride != 0) return nullptr;
  const uint64_t handle = (obj_addr - kObjBase) / kObjStride;
  const auto it = buffers_.find(uint32_t(handle));
  return it != buffers_.end() && it->second.obj_addr == obj_addr ? &it->second : nullptr;
}

void SimKernel::release(SimBuffer& b) {
  Domain& d = *domains_[b.domain];
  d.iova.free(b.iova);
  d.by_iova.erase(b.iova);
  ::munmap(b.host, b.size);
  b.host = nullptr;
}

void SimKernel::account_unmapped(const SimBuffer& b) {
  SimDomainStats& ds = stats_.domains[b.domain];
  ds.live_buffers--;
  ds.mapped_bytes -= b.size;
  ds.iova_used_bytes -= domains_[b.domain]->iova.range_bytes(b.iova);
  stats_.live_buffers--;
  stats_.total_mapped_bytes -= b.size;
}

int SimKernel::action(uapi::Action& a) {
  std::lock_guard lock(mutex_);
  if (closed_) return EBADF;
  switch (a.flags) {
    case uapi::kActGetHwVersion:
      a.value = 0;  // the RK3588's hardware version word is not among the public facts
      return 0;
    case uapi::kActGetDrvVersion:
      a.value = kDriverVersion;
      return 0;
    case uapi::kActGetIommuDomainId:
      a.value = stats_.active_domain;
      return 0;
    case uapi::kActSetIommuDomainId:
      if (!domain_usable(a.value)) return EINVAL;
      switch_to(a.value);
      return 0;
    case uapi::kActGetTotalSramSize:
    case uapi::kActGetFreeSramSize:
      a.value = 0;
      return 0;
    case uapi::kActReset:
      return 0;
    default:
      return EINVAL;
  }
}

int SimKernel::mem_create(uapi::MemCreate& c) {
  std::lock_guard lock(mutex_);
  return create_locked(c, -1);
}

int SimKernel::import_fd(int fd, uapi::MemCreate& c) {
  std::lock_guard lock(mutex_);
  if (fd < 0) return EBADF;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return EBADF;
  if (c.size == 0 || st.st_size < 0 || c.size > uint64_t(st.st_size)) return EINVAL;
  return create_locked(c, fd);
}

int SimKernel::create_locked(uapi::MemCreate& c, int fd) {
  if (closed_) return EBADF;
  if (c.size == 0 || c.size > (uint64_t(1) << 63)) return EINVAL;
  if ((c.flags & ~kKnownMemFlags) != 0) return EINVAL;
  if (!domain_usable(c.iommu_domain_id)) return EINVAL;
  const uint32_t id = uint32_t(c.iommu_domain_id);
  switch_to(id);  // the driver maps the new buffer in the domain it names, which becomes live
  const uint64_t size = align_up(c.size, kPage);
  Domain& d = domain(id);
  const auto iova = d.iova.alloc(size, (c.flags & uapi::kMemIommuLimitIovaAlignment) == 0);
  if (!iova) return EFAULT;  // "failed to allocate IOVA" surfaces as EFAULT (errno 14), as measured
  void* host = fd < 0 ? ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                      : ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (host == MAP_FAILED) {
    const int err = errno;
    d.iova.free(*iova);
    return fd < 0 ? ENOMEM : (err == EACCES || err == EBADF ? EBADF : ENOMEM);
  }
  // Fresh anonymous memory reads as zero, which honours ZEROING without touching the pages.
  SimBuffer b;
  b.handle = next_handle_++;
  b.domain = id;
  b.flags = c.flags;
  b.size = size;
  b.iova = *iova;
  b.obj_addr = kObjBase + uint64_t(b.handle) * kObjStride;
  b.host = static_cast<uint8_t*>(host);
  if (fd >= 0) {
    // rknpu_gem_prime_import_sg_table records only (NON_)CONTIGUOUS for an import: never CACHEABLE.
    b.imported = true;
    b.flags = uapi::kMemNonContiguous;
  }
  d.by_iova.emplace(b.iova, b.handle);
  buffers_.emplace(b.handle, b);

  SimDomainStats& ds = stats_.domains[id];
  ds.live_buffers++;
  ds.mapped_bytes += size;
  ds.peak_mapped_bytes = std::max(ds.peak_mapped_bytes, ds.mapped_bytes);
  ds.iova_used_bytes += d.iova.range_bytes(b.iova);
  stats_.live_buffers++;
  stats_.total_mapped_bytes += size;
  stats_.peak_total_mapped_bytes = std::max(stats_.peak_total_mapped_bytes, stats_.total_mapped_bytes);
  stats_.creates++;

  c.handle = b.handle;
  c.size = size;
  c.obj_addr = b.obj_addr;
  c.dma_addr = b.iova;
  c.sram_size = 0;
  return 0;
}

int SimKernel::mem_map(uapi::MemMap& m) {
  std::lock_guard lock(mutex_);
  if (closed_) return EBADF;
  if (buffers_.find(m.handle) == buffers_.end()) return EINVAL;
  m.offset = uint64_t(m.handle) * kMapOffsetStride;
  return 0;
}

int SimKernel::mem_destroy(uapi::MemDestroy& d) {
  std::lock_guard lock(mutex_);
  if (closed_) return EBADF;
  const auto it = buffers_.find(d.handle);
  if (it == buffers_.end()) return EINVAL;
  if (d.obj_addr != 0 && d.obj_addr != it->second.obj_addr) return EINVAL;
  switch_to(it->second.domain);  // rknpu_gem_destroy_ioctl switches to the object's domain
  account_unmapped(it->second);
  release(it->second);
  buffers_.erase(it);
  stats_.destroys++;
  return 0;
}

int SimKernel::mem_sync(uapi::MemSync& s) {
  std::lock_guard lock(mutex_);
  if (closed_) return EBADF;
  if (s.flags == 0 || (s.flags & ~uint32_t(uapi::kSyncToDevice | uapi::kSyncFromDevice)) != 0) return EINVAL;
  const SimBuffer* b = find_by_obj(s.obj_addr);
  if (b == nullptr) return EINVAL;
  // rknpu_gem_sync_ioctl: "if (!(rknpu_obj->flags & RKNPU_MEM_CACHEABLE)) return -EINVAL".
  if ((b->flags & uapi::kMemCacheable) == 0) return EINVAL;
  switch_to(b->domain);  // and it switches to the object's domain first
  if (s.offset > b->size || s.size > b->size - s.offset) return EINVAL;
  // Host memory is the device memory here: nothing to flush or invalidate.
  stats_.syncs++;
  return 0;
}

int SimKernel::sync_dmabuf(uint32_t handle, uint32_t flags) {
  std::lock_guard lock(mutex_);
  if (closed_) return EBADF;
  const auto it = buffers_.find(handle);
  if (it == buffers_.end() || !it->second.imported) return EINVAL;
  if (flags == 0 || (flags & ~uint32_t(uapi::kSyncToDevice | uapi::kSyncFromDevice)) != 0) return EINVAL;
  stats_.syncs++;
  return 0;
}

int SimKernel::submit(uapi::Submit& s) {
  std::lock_guard lock(mutex_);
  if (closed_) return EBADF;
  if (s.task_number == 0 || s.core_mask > 7) return EINVAL;
  const uint32_t mask = s.core_mask;
  if (mask == 5 || mask == 6) return EINVAL;  // only AUTO, 1, 2, 4, 3 and 7 run
  if (mask >> options_.cores != 0) return EINVAL;  // names a core this NPU does not have
  if ((s.flags & uapi::kJobPc) == 0) return EINVAL;
  if (!domain_usable(s.iommu_domain_id)) return EINVAL;
  const SimBuffer* tasks = find_by_obj(s.task_obj_addr);
  if (tasks == nullptr || (tasks->flags & uapi::kMemKernelMapping) == 0) return EINVAL;
  if (!fits(s.task_start, s.task_number, sizeof(uapi::Task), tasks->size)) return EINVAL;
  const std::array<uint64_t, 3> queued{};  // one job at a time: nothing queued when this one comes
  const uint32_t run_mask = mask == 0 ? 1u << schedule_auto_core(queued, options_.cores) : mask;
  for (uint32_t core = 0; core < 3; ++core) {
    if ((run_mask & (1u << core)) == 0) continue;
    const uapi::SubcoreTask& sub = s.subcore_task[subcore_index(run_mask, core)];
    if (sub.task_number == 0 || !fits(sub.task_start, sub.task_number, sizeof(uapi::Task), tasks->size)) {
      return EINVAL;
    }
  }
  switch_to(s.iommu_domain_id);  // a switch here is priced by switch_to
  s.core_mask = run_mask;  // the driver writes the chosen core's mask into the job's args
  return run_submit(s, *tasks);
}

int SimKernel::run_submit(uapi::Submit& s, const SimBuffer& tasks) {
  const auto start = std::chrono::steady_clock::now();
  const uint32_t run_mask = s.core_mask;
  const auto* task_array = reinterpret_cast<const uapi::Task*>(tasks.host);
  ActiveSpace space(*this, stats_.active_domain);
  uint64_t done = 0;
  last_fetches_.clear();
  std::array<std::vector<TaskWork>, 3> work;
  for (uint32_t core = 0; core < 3; ++core) {
    if ((run_mask & (1u << core)) == 0) continue;
    const uapi::SubcoreTask& sub = s.subcore_task[subcore_index(run_mask, core)];
    const std::string range =
        str_cat(" (core ", core, ", tasks ", sub.task_start, "..", uint64_t(sub.task_start) + sub.task_number - 1, ")");
    try {
      ExecStats st = execute_tasks(space, core_regs_[core], core, task_array + sub.task_start, sub.task_number,
                                   &last_fetches_, options_.timing_only);
      done += st.tasks;
      stats_.core_tasks[core] += st.tasks;
      work[core] = std::move(st.work);
    } catch (const Fault& f) {
      stats_.faults++;
      last_fault_ = str_cat(f.what(), range);
      return EFAULT;
    } catch (const Timeout& e) {
      stats_.timeouts++;
      last_fault_ = str_cat("job timed out: ", e.what(), range);
      return ETIMEDOUT;
    } catch (const Error& e) {
      // Unmodelled: the simulator cannot say what the board would do with this stream.
      last_fault_ = str_cat("task rejected: ", e.what(), range);
      return EIO;
    }
  }
  const JobCost cost = cost_job(options_.board, work, false);
  stats_.modeled_ns += cost.total_ns;
  for (size_t c = 0; c < 3; ++c) stats_.modeled_core_busy_ns[c] += cost.core_busy_ns[c];
  stats_.modeled_ddr_bytes += cost.ddr_bytes;
  stats_.submits++;
  stats_.tasks += done;
  s.task_counter = uint32_t(done);
  s.hw_elapse_time = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - start).count();
  return 0;
}

void* SimKernel::mmap(uint64_t offset, uint64_t size) {
  std::lock_guard lock(mutex_);
  if (closed_ || offset % kMapOffsetStride != 0) {
    errno = closed_ ? EBADF : EINVAL;
    return nullptr;
  }
  const auto it = buffers_.find(uint32_t(offset / kMapOffsetStride));
  if (it == buffers_.end() || offset / kMapOffsetStride > UINT32_MAX || size == 0 || size > it->second.size) {
    errno = EINVAL;
    return nullptr;
  }
  return it->second.host;
}

int SimKernel::munmap(void* address, uint64_t size) { return address == nullptr ? EINVAL : 0; }

std::string SimKernel::describe_last_fault() const {
  std::lock_guard lock(mutex_);
  return last_fault_;
}

std::vector<FetchRecord> SimKernel::last_fetches() const {
  std::lock_guard lock(mutex_);
  return last_fetches_;
}

SimStats SimKernel::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace ork::npu::sim
