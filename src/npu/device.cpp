#include "npu/device.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/env.h"
#include "core/log.h"
#include "npu/drm_kernel.h"

namespace ork::npu {

namespace {

constexpr const char* kNoNpu = "no RK3588 NPU found (rknpu driver not present): use --device sim or cpu";
constexpr uint32_t kRk3588Cores = 3;
constexpr uint64_t kRk3588WindowBytes = uint64_t(1) << 32;  // 32-bit NPU address registers

std::string errno_text(int err) { return str_cat("errno ", err, " (", std::strerror(err), ")"); }

}  // namespace

// ---- DeviceOptions, AllocError ---------------------------------------------------------------------

DeviceOptions DeviceOptions::from_env() {
  DeviceOptions o;
  o.sim_window_bytes = uint64_t(env_int("ORK_SIM_WINDOW_MB", int64_t(o.sim_window_bytes >> 20), 1, 4096)) << 20;
  o.sim_domains = uint32_t(env_int("ORK_SIM_DOMAINS", o.sim_domains, 1, uapi::kMaxDomains));
  o.sim_cores = uint32_t(env_int("ORK_SIM_CORES", o.sim_cores, 1, 3));
  o.board_profile = env_string("ORK_BOARD_PROFILE").value_or("");
  o.sim_timing_only = env_flag("ORK_SIM_TIMING_ONLY", false);
  return o;
}

std::string format_bytes(uint64_t bytes) {
  if (bytes != 0 && bytes % (uint64_t(1) << 30) == 0) return str_cat(bytes >> 30, " GiB");
  if (bytes != 0 && bytes % (uint64_t(1) << 20) == 0) return str_cat(bytes >> 20, " MiB");
  if (bytes != 0 && bytes % (uint64_t(1) << 10) == 0) return str_cat(bytes >> 10, " KiB");
  return str_cat(bytes, " bytes");
}

AllocError::AllocError(uint32_t domain, uint64_t size, int err)
    : Error(str_cat("cannot map ", format_bytes(size), " in IOMMU domain ", domain, ": ", errno_text(err))),
      domain_(domain),
      size_(size),
      err_(err) {}

// ---- Buffer ------------------------------------------------------------------------------------------

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = std::exchange(other.device_, nullptr);
    handle_ = std::exchange(other.handle_, 0);
    domain_ = std::exchange(other.domain_, 0);
    owns_ = std::exchange(other.owns_, false);
    imported_ = std::exchange(other.imported_, false);
    iova_ = std::exchange(other.iova_, 0);
    obj_addr_ = std::exchange(other.obj_addr_, 0);
    size_ = std::exchange(other.size_, 0);
    base_offset_ = std::exchange(other.base_offset_, 0);
    host_ = std::exchange(other.host_, nullptr);
  }
  return *this;
}

void Buffer::reset() {
  if (device_ != nullptr && owns_) device_->release(*this);
  device_ = nullptr;
  handle_ = 0;
  domain_ = 0;
  owns_ = false;
  imported_ = false;
  iova_ = 0;
  obj_addr_ = 0;
  size_ = 0;
  base_offset_ = 0;
  host_ = nullptr;
}

Buffer Buffer::view(uint64_t offset, uint64_t size) const {
  ORK_CHECK(device_ != nullptr, "view of an empty NPU buffer");
  ORK_CHECK(offset <= size_ && size <= size_ - offset, "view [", offset, ", +", size, ") outside NPU buffer ",
            handle_, " of ", size_, " bytes");
  Buffer v;
  v.device_ = device_;
  v.handle_ = handle_;
  v.domain_ = domain_;
  v.owns_ = false;
  v.imported_ = imported_;  // a view of an import syncs through the dma-buf too
  v.iova_ = iova_ + offset;
  v.obj_addr_ = obj_addr_;
  v.size_ = size;
  v.base_offset_ = base_offset_ + offset;
  v.host_ = host_ + offset;
  return v;
}

void Buffer::sync_to_device(uint64_t offset, uint64_t size) { sync(uapi::kSyncToDevice, offset, size); }
void Buffer::sync_from_device(uint64_t offset, uint64_t size) { sync(uapi::kSyncFromDevice, offset, size); }

void Buffer::sync(uint32_t flag, uint64_t offset, uint64_t size) {
  ORK_CHECK(device_ != nullptr, "sync of an empty NPU buffer");
  ORK_CHECK(offset <= size_, "sync offset ", offset, " past the end of NPU buffer ", handle_, " (", size_,
            " bytes)");
  size = std::min(size, size_ - offset);
  if (size == 0) return;
  device_->sync(*this, flag, base_offset_ + offset, size);
}

// ---- Device ------------------------------------------------------------------------------------------

Device::Device(std::unique_ptr<Kernel> kernel, Capabilities caps, sim::SimKernel* sim, uint32_t active_domain)
    : kernel_(std::move(kernel)), caps_(std::move(caps)), sim_(sim), active_domain_(active_domain) {}

Device::~Device() = default;

std::unique_ptr<Device> Device::open_sim(const sim::SimOptions& options) {
  auto kernel = std::make_unique<sim::SimKernel>(options);
  sim::SimKernel* sim = kernel.get();
  Capabilities caps;
  caps.name = kernel->name();
  caps.simulated = true;
  caps.cores = options.cores;
  caps.domains = options.domains;
  caps.window_bytes = options.window_bytes;
  caps.driver_version = sim::SimKernel::kDriverVersion;
  return std::unique_ptr<Device>(new Device(std::move(kernel), std::move(caps), sim, 0));
}

std::unique_ptr<Device> Device::open(const DeviceOptions& options) {
  sim::SimOptions sim_options(options.sim_window_bytes, options.sim_domains, options.sim_cores);
  sim_options.board = sim::load_board_profile(options.board_profile);
  sim_options.timing_only = options.sim_timing_only;
  if (options.sim_timing_only && options.kind != "npu") {
    log::warn("simulated NPU in timing-only mode: matmul results are not computed, so every output is "
              "meaningless; only the modeled board time counts");
  }
  if (options.kind == "sim") return open_sim(sim_options);
  if (options.kind != "npu" && options.kind != "auto") {
    fail("unknown NPU device kind '", options.kind, "' (expected npu, sim or auto)");
  }
  std::unique_ptr<DrmKernel> drm = DrmKernel::open_default();
  if (!drm) {
    if (options.kind == "npu") fail(kNoNpu);
    return open_sim(sim_options);
  }
  Capabilities caps;
  caps.name = drm->name();
  caps.simulated = false;
  caps.cores = kRk3588Cores;
  caps.driver_version = drm->driver_version();
  caps.domains = domains_for(caps.driver_version);
  caps.window_bytes = kRk3588WindowBytes;
  uapi::Action a{uapi::kActGetIommuDomainId, 0};
  const uint32_t active = drm->action(a) == 0 ? a.value : 0;
  return std::unique_ptr<Device>(new Device(std::move(drm), std::move(caps), nullptr, active));
}

void Device::note_domain(uint32_t domain) {
  if (domain != active_domain_) {
    active_domain_ = domain;
    counters_.domain_switches++;
  }
}

Buffer Device::alloc(uint64_t size, uint32_t domain, uint32_t flags) {
  if (domain >= caps_.domains || size == 0) throw AllocError(domain, size, EINVAL);
  uapi::MemCreate c{};
  c.flags = flags;
  c.size = size;
  c.iommu_domain_id = int32_t(domain);
  const int err = kernel_->mem_create(c);
  {
    std::lock_guard lock(mutex_);
    if (err != EINVAL) note_domain(domain);  // the driver switched before it failed to map
  }
  if (err != 0) throw AllocError(domain, size, err);
  return finish_create(c, domain, size, false);
}

Buffer Device::import_fd(int fd, uint64_t size, uint32_t domain, uint32_t flags) {
  if (domain >= caps_.domains || size == 0) throw AllocError(domain, size, EINVAL);
  uapi::MemCreate c{};
  c.flags = flags;
  c.size = size;
  c.iommu_domain_id = int32_t(domain);
  const int err = kernel_->import_fd(fd, c);
  if (err == 0) {
    std::lock_guard lock(mutex_);
    note_domain(domain);
  }
  if (err != 0) throw AllocError(domain, size, err);
  return finish_create(c, domain, size, true);
}

Buffer Device::finish_create(const uapi::MemCreate& c, uint32_t domain, uint64_t size, bool imported) {
  uapi::MemDestroy d{c.handle, 0, c.obj_addr};
  uapi::MemMap m{c.handle, 0, 0};
  int map_err = kernel_->mem_map(m);
  void* host = nullptr;
  if (map_err == 0) {
    errno = 0;
    host = kernel_->mmap(m.offset, c.size);
    if (host == nullptr) map_err = errno != 0 ? errno : ENOMEM;
  }
  if (map_err != 0) {
    kernel_->mem_destroy(d);
    throw AllocError(domain, size, map_err);
  }
  {
    std::lock_guard lock(mutex_);
    counters_.creates++;
    counters_.mapped_bytes[domain] += c.size;
    counters_.peak_mapped_bytes[domain] = std::max(counters_.peak_mapped_bytes[domain], counters_.mapped_bytes[domain]);
    counters_.total_mapped_bytes += c.size;
    counters_.peak_total_mapped_bytes = std::max(counters_.peak_total_mapped_bytes, counters_.total_mapped_bytes);
    if (imported) {
      counters_.imports++;
      counters_.imported_bytes += c.size;
    }
  }
  Buffer b;
  b.device_ = this;
  b.handle_ = c.handle;
  b.domain_ = domain;
  b.owns_ = true;
  b.imported_ = imported;
  b.iova_ = c.dma_addr;
  b.obj_addr_ = c.obj_addr;
  b.size_ = c.size;
  b.host_ = static_cast<uint8_t*>(host);
  return b;
}

void Device::release(Buffer& b) noexcept {
  if (const int err = kernel_->munmap(b.host_, b.size_); err != 0) {
    log::warn("NPU buffer ", b.handle_, ": munmap failed: ", errno_text(err));
  }
  uapi::MemDestroy d{b.handle_, 0, b.obj_addr_};
  const int err = kernel_->mem_destroy(d);
  std::lock_guard lock(mutex_);
  if (err != EINVAL) note_domain(b.domain_);  // the driver switches to the object's domain first
  if (err != 0) {
    log::warn("NPU buffer ", b.handle_, " in domain ", b.domain_, ": MEM_DESTROY failed: ", errno_text(err));
    return;
  }
  counters_.destroys++;
  counters_.mapped_bytes[b.domain_] -= b.size_;
  counters_.total_mapped_bytes -= b.size_;
  if (b.imported_) counters_.imported_bytes -= b.size_;
}

void Device::sync(const Buffer& b, uint32_t flag, uint64_t offset, uint64_t size) {
  if (b.imported_) {
    // The driver refuses MEM_SYNC on imports (not CACHEABLE): the dma-buf's own sync, whole buffer.
    const int err = kernel_->sync_dmabuf(b.handle_, flag);
    ORK_CHECK(err == 0, "NPU buffer ", b.handle_, " (imported): dma-buf sync failed: ", errno_text(err));
    std::lock_guard lock(mutex_);
    counters_.syncs++;
    return;
  }
  uapi::MemSync s{flag, 0, b.obj_addr_, offset, size};
  const int err = kernel_->mem_sync(s);
  std::lock_guard lock(mutex_);
  if (err != EINVAL) note_domain(b.domain_);  // MEM_SYNC switches to the object's domain
  ORK_CHECK(err == 0, "NPU buffer ", b.handle_, ": sync of [", offset, ", +", size, ") failed: ", errno_text(err));
  counters_.syncs++;
}

void Device::submit(uapi::Submit& s) {
  const int err = kernel_->submit(s);
  std::string text;
  {  // counted before the throw below
    std::lock_guard lock(mutex_);
    if (err != EINVAL) note_domain(s.iommu_domain_id);  // validation failures happen before the switch
    if (err == 0) counters_.submits++;
    if (err == EFAULT) counters_.faults++;
  }
  if (err == 0) return;
  if (err == EFAULT || err == EIO || err == ETIMEDOUT) text = kernel_->describe_last_fault();  // else stale
  if (err == EFAULT) {
    fail("NPU fault: ", text.empty() ? str_cat("submit in domain ", s.iommu_domain_id, " failed: ", errno_text(err))
                                     : text);
  }
  if (err == ETIMEDOUT) {
    fail("NPU job timed out in domain ", s.iommu_domain_id, text.empty() ? "" : ": ", text,
         caps_.simulated ? "" : " (send the output of 'sudo dmesg | tail -50' with a bug report)");
  }
  fail("NPU submit failed in domain ", s.iommu_domain_id, ": ", errno_text(err), text.empty() ? "" : ": ", text);
}

Counters Device::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

}  // namespace ork::npu
