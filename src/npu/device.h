// Device — the NPU as the rest of ork sees it: RAII buffers in IOMMU domains, submit, counters.
// It runs unchanged over the real driver (DrmKernel) and the simulated one (sim::SimKernel).
//
// Thread-safety: alloc, buffer release, sync and submit may be called from several threads at once.
// Ownership: a Buffer must not outlive the Device that made it; a view must not outlive its parent.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/error.h"
#include "npu/kernel.h"
#include "npu/sim/sim_kernel.h"
#include "npu/uapi.h"

namespace ork::npu {

struct DeviceOptions {
  std::string kind = "auto";  // "npu" (the rknpu driver, else an error) | "sim" | "auto" (npu when present, else sim)
  uint64_t sim_window_bytes = uint64_t(4) << 30;
  uint32_t sim_domains = 16;
  uint32_t sim_cores = 3;
  std::string board_profile;     // JSON profile of the board cost model ("": the built-in one)
  bool sim_timing_only = false;  // the simulator models time but skips the arithmetic

  // Defaults overridden by ORK_SIM_WINDOW_MB (1..4096), ORK_SIM_DOMAINS (1..16), ORK_SIM_CORES (1..3),
  // ORK_BOARD_PROFILE (a file), ORK_SIM_TIMING_ONLY (0/1).
  // A malformed or out-of-range value throws ork::Error naming the variable.
  static DeviceOptions from_env();
};

struct Capabilities {
  std::string name;          // the kernel's name(): "sim", "rknpu 0.9.8 (/dev/dri/renderD129)"
  bool simulated = false;
  uint32_t cores = 0;
  uint32_t domains = 0;      // usable IOMMU domain ids: 0..domains-1
  uint64_t window_bytes = 0; // NPU address space per domain
  uint32_t driver_version = 0;
};

// An allocation the kernel refused. Message: "cannot map 64 MiB in IOMMU domain 3: errno 14 (Bad address)".
class AllocError : public Error {
 public:
  AllocError(uint32_t domain, uint64_t size, int err);
  uint32_t domain() const { return domain_; }
  uint64_t size() const { return size_; }
  int err() const { return err_; }

 private:
  uint32_t domain_;
  uint64_t size_;
  int err_;
};

// "64 MiB", "3 GiB", "12 KiB", "100 bytes".
std::string format_bytes(uint64_t bytes);

class Device;

// A device buffer mapped into this process. Move-only. An owning buffer (owns()) destroys the
// device buffer when destroyed or reset(), which returns its IOVA to the domain; a view does not.
class Buffer {
 public:
  Buffer() = default;
  ~Buffer() { reset(); }
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  uint32_t handle() const { return handle_; }
  uint64_t iova() const { return iova_; }       // NPU address of byte 0 of this buffer (or view)
  uint8_t* host() const { return host_; }       // CPU address of byte 0
  uint64_t size() const { return size_; }       // bytes; an owning buffer's size is page-rounded
  uint32_t domain() const { return domain_; }
  bool owns() const { return owns_; }
  uint64_t obj_addr() const { return obj_addr_; }  // the kernel cookie (for task_obj_addr)
  explicit operator bool() const { return device_ != nullptr; }

  // Make CPU writes visible to the NPU / NPU writes visible to the CPU, for [offset, offset+size)
  // of this buffer (size clamped to the end). Throws ork::Error on a bad range or a kernel error.
  void sync_to_device(uint64_t offset = 0, uint64_t size = UINT64_MAX);
  void sync_from_device(uint64_t offset = 0, uint64_t size = UINT64_MAX);

  // A non-owning buffer for [offset, offset+size) of this one (e.g. a slice of an arena). Throws
  // ork::Error when the range does not fit.
  Buffer view(uint64_t offset, uint64_t size) const;

  // Releases an owning buffer (munmap + MEM_DESTROY); a view just becomes empty. Never throws.
  void reset();

 private:
  friend class Device;
  void sync(uint32_t flag, uint64_t offset, uint64_t size);

  Device* device_ = nullptr;
  uint32_t handle_ = 0;
  uint32_t domain_ = 0;
  bool owns_ = false;
  bool imported_ = false;
  uint64_t iova_ = 0;
  uint64_t obj_addr_ = 0;
  uint64_t size_ = 0;
  uint64_t base_offset_ = 0;  // offset of this view inside the kernel buffer
  uint8_t* host_ = nullptr;
};

struct Counters {
  std::array<uint64_t, uapi::kMaxDomains> mapped_bytes{};       // live, per domain (page-rounded)
  std::array<uint64_t, uapi::kMaxDomains> peak_mapped_bytes{};
  uint64_t total_mapped_bytes = 0;
  uint64_t peak_total_mapped_bytes = 0;
  uint64_t creates = 0;          // buffers created
  uint64_t destroys = 0;         // buffers destroyed
  uint64_t domain_switches = 0;  // changes of the domain named by successive creates/submits
                                 // (exact when one thread drives the device)
  uint64_t submits = 0;          // submits completed
  uint64_t faults = 0;           // submits failed by a fault (EFAULT)
  uint64_t syncs = 0;            // successful syncs
  uint64_t imports = 0;          // buffers imported from an fd (import_fd)
  uint64_t imported_bytes = 0;   // live imported bytes (included in mapped_bytes)
};

// Buffer flags: non-contiguous pages (no CMA), cacheable (use sync_to_device/from_device), IOMMU.
constexpr uint32_t kDefaultBufferFlags = uapi::kMemNonContiguous | uapi::kMemCacheable | uapi::kMemIommu;
// A buffer that holds a Task array must also be mapped in the kernel.
constexpr uint32_t kTaskBufferFlags = kDefaultBufferFlags | uapi::kMemKernelMapping;

class Device {
 public:
  // kind "npu": the rknpu driver, or ork::Error "no RK3588 NPU found (rknpu driver not present): use
  // --device sim or cpu"; "sim": the simulator with the sim_* options; "auto": npu when present,
  // else sim. Any other kind → ork::Error naming it.
  static std::unique_ptr<Device> open(const DeviceOptions& options);
  static std::unique_ptr<Device> open_sim(const sim::SimOptions& options = {});

  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Capabilities& caps() const { return caps_; }

  // A new owning buffer of `size` bytes (page-rounded) in IOMMU domain `domain`, mapped into this
  // process. Throws AllocError (domain, size, errno) when the kernel refuses (EFAULT: no room in the
  // domain's window; EINVAL: size 0 or a domain this device does not have).
  Buffer alloc(uint64_t size, uint32_t domain, uint32_t flags = kDefaultBufferFlags);

  // Imports `size` bytes of the memory behind `fd` (a dma-buf; a memfd on the simulator) as an owning
  // buffer in `domain`: the device and the caller then share those bytes (zero copy). Destroying the
  // buffer drops the import, not the caller's memory; the fd is not kept. Throws AllocError (EINVAL:
  // size 0 or larger than the fd's memory; EBADF: not a mappable fd; EOPNOTSUPP: the kernel cannot
  // import).
  Buffer import_fd(int fd, uint64_t size, uint32_t domain, uint32_t flags = kDefaultBufferFlags);

  // Runs a job. Throws ork::Error on failure: "NPU fault: <the kernel's fault text>" for EFAULT,
  // "NPU submit failed in domain D: errno E (...)" otherwise.
  void submit(uapi::Submit& s);

  Counters counters() const;
  Kernel& kernel() { return *kernel_; }
  // The simulator behind this device, or nullptr on real hardware (tests read its ground truth).
  sim::SimKernel* sim_kernel() { return sim_; }
  const sim::SimKernel* sim_kernel() const { return sim_; }

 private:
  Device(std::unique_ptr<Kernel> kernel, Capabilities caps, sim::SimKernel* sim, uint32_t active_domain);
  friend class Buffer;
  void release(Buffer& b) noexcept;
  void sync(const Buffer& b, uint32_t flag, uint64_t offset, uint64_t size);
  void note_domain(uint32_t domain);  // caller holds mutex_
  Buffer finish_create(const uapi::MemCreate& c, uint32_t domain, uint64_t size, bool imported);

  std::unique_ptr<Kernel> kernel_;
  Capabilities caps_;
  sim::SimKernel* sim_ = nullptr;
  mutable std::mutex mutex_;  // guards counters_ and active_domain_
  Counters counters_;
  uint32_t active_domain_ = 0;
};

}  // namespace ork::npu
