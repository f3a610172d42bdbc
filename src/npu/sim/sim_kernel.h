// SimKernel — the rknpu driver, in-process: the same requests and errors as the real one (see
// docs/hardware.md), over host memory. It models what matters to memory management above it:
//   - per-domain IOVA spaces (IovaAllocator: 64 MiB buffers fail at #63 with EFAULT, > half the
//     window never maps), ids 0..15, a domain created on first use;
//   - one live domain for the device, switched (and counted) when a create, sync, destroy, submit
//     or SET_IOMMU_DOMAIN_ID names another (rknpu_gem.c / rknpu_job.c call
//     rknpu_iommu_domain_get_and_switch in each);
//   - MEM_SYNC only on buffers created CACHEABLE: EINVAL otherwise, and so for every import (the
//     driver gives imports only NON_CONTIGUOUS/CONTIGUOUS, rknpu_gem_prime_import_sg_table); an
//     import is synced through its dma-buf instead (sync_dmabuf);
//   - buffers not destroyed stay mapped until close() (the fd closing; also done by the destructor);
//   - SUBMIT validated as the driver does (AUTO, mask 0, runs on the least-loaded core, its
//     subcore_task slot, and reports that core's mask back), then each core's tasks run through the
//     PC model (sim::execute_tasks) on that core's persistent register file, with an address space of
//     the ACTIVE domain only: a task that touches anything else faults (EFAULT); a job that would
//     never finish on a board (short or over-long fetch, a configuration outside the board-verified
//     envelope) returns ETIMEDOUT; one the simulator does not model, EIO — each described by
//     describe_last_fault().
// Imported buffers (import_fd) map the caller's memfd/dma-buf shared, so device and caller see the
// same bytes. Buffer memory is otherwise anonymous MAP_NORESERVE memory: creating 63 x 64 MiB x 16 domains costs address
// space, not RAM, until pages are written.
//
// Thread-safe: every request holds one mutex (a submit runs to completion under it, so jobs are
// serialized, as jobs of different domains are on the board).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "npu/kernel.h"
#include "npu/sim/executor.h"
#include "npu/sim/hw_registers.h"
#include "npu/sim/iova_allocator.h"

namespace ork::npu::sim {

struct SimOptions {
  SimOptions(uint64_t window = uint64_t(4) << 30, uint32_t n_domains = 16, uint32_t n_cores = 3)
      : window_bytes(window), domains(n_domains), cores(n_cores) {}
  uint64_t window_bytes = uint64_t(4) << 30;  // per domain; multiple of 4096 in [1 MiB, 4 GiB]
  uint32_t domains = 16;                      // usable ids 0..domains-1; 1..16
  uint32_t cores = 3;                         // 1..3
  BoardProfile board;                         // the cost model's parameters (board_model.h)
  bool timing_only = false;                   // skip the arithmetic: outputs are meaningless
};

// Ground truth of one domain, for tests and accounting cross-checks.
struct SimDomainStats {
  bool created = false;
  uint32_t live_buffers = 0;
  uint64_t mapped_bytes = 0;       // sum of page-rounded sizes of live buffers
  uint64_t peak_mapped_bytes = 0;
  uint64_t iova_used_bytes = 0;    // IOVA reserved (includes small-size rounding)
};

struct SimStats {
  std::array<SimDomainStats, uapi::kMaxDomains> domains{};
  uint32_t active_domain = 0;
  uint64_t live_buffers = 0;
  uint64_t total_mapped_bytes = 0;
  uint64_t peak_total_mapped_bytes = 0;
  uint64_t creates = 0;          // successful MEM_CREATE
  uint64_t destroys = 0;         // successful MEM_DESTROY (not the release at close)
  uint64_t domain_switches = 0;
  uint64_t submits = 0;          // submits that completed without error
  uint64_t faults = 0;           // submits failed by a sim::Fault
  uint64_t syncs = 0;            // successful MEM_SYNC and dma-buf syncs of imports
  uint64_t tasks = 0;            // tasks executed
  uint64_t timeouts = 0;         // submits that would not finish on a board (ETIMEDOUT)
  std::array<uint64_t, 3> core_tasks{};  // tasks executed per core
  // Modeled board time (board_model.h): the completed submits' jobs plus every domain switch (priced
  // in the ioctl that made it), and per core the time it ran tasks; the DDR bytes the tasks moved.
  double modeled_ns = 0;
  std::array<double, 3> modeled_core_busy_ns{};
  uint64_t modeled_ddr_bytes = 0;
};

// What close() released: buffers that were never destroyed.
struct SimLeakReport {
  uint64_t buffers = 0;
  uint64_t bytes = 0;
};

class SimKernel final : public Kernel {
 public:
  static constexpr uint32_t kDriverVersion = 908;  // 0.9.8
  static constexpr uint64_t kMinWindowBytes = uint64_t(1) << 20;

  // Throws ork::Error when an option is out of range (naming it).
  explicit SimKernel(const SimOptions& options = {});
  ~SimKernel() override;
  SimKernel(const SimKernel&) = delete;
  SimKernel& operator=(const SimKernel&) = delete;

  int action(uapi::Action& a) override;
  int mem_create(uapi::MemCreate& c) override;
  // Maps the fd (MAP_SHARED, like the driver's dma_buf_mmap) and gives it an IOVA in the domain:
  // EBADF for an fd that cannot be mapped, EINVAL when c.size is 0 or exceeds the fd's size.
  int import_fd(int fd, uapi::MemCreate& c) override;
  int mem_map(uapi::MemMap& m) override;
  int mem_destroy(uapi::MemDestroy& d) override;
  int mem_sync(uapi::MemSync& s) override;
  // The CPU-access bracket of an imported buffer (DMA_BUF_IOCTL_SYNC on the board): EINVAL for a
  // handle that is not an import.
  int sync_dmabuf(uint32_t handle, uint32_t flags) override;
  int submit(uapi::Submit& s) override;
  // Returns the buffer's host memory itself (offset from MEM_MAP; size <= the buffer's size).
  // Valid until the buffer is destroyed or the kernel closed. munmap() of such a pointer is a no-op.
  void* mmap(uint64_t offset, uint64_t size) override;
  int munmap(void* address, uint64_t size) override;
  std::string describe_last_fault() const override;
  std::string name() const override { return "sim"; }

  // The fd closing: releases every buffer still live (IOVA and memory) and reports them. Afterwards
  // every request fails with EBADF. Idempotent (a second close reports nothing).
  SimLeakReport close();

  SimStats stats() const;
  // What the PC fetched in the last submit, task by task (empty before the first).
  std::vector<FetchRecord> last_fetches() const;
  const SimOptions& options() const { return options_; }

 private:
  struct SimBuffer {
    uint32_t handle = 0;
    uint32_t domain = 0;
    uint32_t flags = 0;
    uint64_t size = 0;  // page-rounded
    uint64_t iova = 0;
    uint64_t obj_addr = 0;
    uint8_t* host = nullptr;
    bool imported = false;
  };
  struct Domain {
    explicit Domain(uint64_t window) : iova(window) {}
    IovaAllocator iova;
    std::map<uint64_t, uint32_t> by_iova;  // start address -> handle
  };
  class ActiveSpace;

  Domain& domain(uint32_t id);  // created on first use
  void switch_to(uint32_t id);
  bool domain_usable(int64_t id) const { return id >= 0 && id < int64_t(options_.domains); }
  SimBuffer* find_by_obj(uint64_t obj_addr);
  void release(SimBuffer& b);  // IOVA and memory; caller erases
  void account_unmapped(const SimBuffer& b);
  int create_locked(uapi::MemCreate& c, int fd);  // fd < 0: anonymous memory
  int run_submit(uapi::Submit& s, const SimBuffer& tasks);

  SimOptions options_;
  mutable std::mutex mutex_;
  bool closed_ = false;
  uint32_t next_handle_ = 1;
  std::array<std::unique_ptr<Domain>, uapi::kMaxDomains> domains_{};
  std::unordered_map<uint32_t, SimBuffer> buffers_;  // by handle
  SimStats stats_;
  std::string last_fault_;
  std::array<RegisterFile, 3> core_regs_{};  // register state per core, kept from job to job
  std::vector<FetchRecord> last_fetches_;
};

}  // namespace ork::npu::sim
