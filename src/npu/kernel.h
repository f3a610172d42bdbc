// Kernel — the ioctl boundary of the NPU: the rknpu driver's requests, in and out, one method per
// ioctl. DrmKernel forwards them to the device file; sim::SimKernel implements them in-process.
//
// Contract of every request method: returns 0 on success or a positive errno (EINVAL, EFAULT, ...)
// exactly where the driver would fail; it never throws for a driver-reported error. Out fields are
// written only on success. Implementations are thread-safe (the real driver is; SimKernel locks).
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>

#include "npu/uapi.h"

namespace ork::npu {

class Kernel {
 public:
  virtual ~Kernel() = default;

  virtual int action(uapi::Action& a) = 0;
  virtual int mem_create(uapi::MemCreate& c) = 0;
  virtual int mem_map(uapi::MemMap& m) = 0;
  virtual int mem_destroy(uapi::MemDestroy& d) = 0;
  virtual int mem_sync(uapi::MemSync& s) = 0;
  virtual int submit(uapi::Submit& s) = 0;

  // Imports the memory behind `fd` (a dma-buf, or a memfd on the simulator) as a device buffer: in,
  // c.size (bytes from the start of the fd's memory; must not exceed it), c.flags, c.iommu_domain_id;
  // out, as MEM_CREATE (handle, page-rounded size, dma_addr, obj_addr). MEM_MAP + mmap then map the
  // same memory, and MEM_DESTROY drops the import (the fd's memory stays the caller's). The caller's
  // fd is not kept (an implementation may hold its own dup until MEM_DESTROY). On the board this is
  // DRM_IOCTL_PRIME_FD_TO_HANDLE then MEM_CREATE naming the new handle (DrmKernel::import_fd);
  // kernels that cannot import return EOPNOTSUPP (the default).
  virtual int import_fd(int fd, uapi::MemCreate& c) { return EOPNOTSUPP; }
  // Makes CPU writes visible to the device (kSyncToDevice) or device writes visible to the CPU
  // (kSyncFromDevice) for a buffer made by import_fd. The driver refuses MEM_SYNC on imports
  // (EINVAL: they are not CACHEABLE), so on the board this is DMA_BUF_IOCTL_SYNC on the dma-buf.
  virtual int sync_dmabuf(uint32_t handle, uint32_t flags) { return EOPNOTSUPP; }

  // Maps `size` bytes of the buffer whose MEM_MAP offset is `offset` into this process (read/write,
  // shared with the device). Returns nullptr on failure with errno set. Undo with munmap().
  virtual void* mmap(uint64_t offset, uint64_t size) = 0;
  // Returns 0 or a positive errno.
  virtual int munmap(void* address, uint64_t size) = 0;

  // What the last failed submit hit (address, domain), or "" when the kernel cannot tell.
  virtual std::string describe_last_fault() const = 0;
  // "rknpu 0.9.8 (/dev/dri/renderD129)", "sim", ...
  virtual std::string name() const = 0;
};

}  // namespace ork::npu
