// Our own declarations of the rknpu kernel driver's user-space interface (ioctl numbers, request
// structs, flags), written from the public facts in docs/hardware.md. Layouts are checked with
// static_asserts on every size and field offset; they must match the 64-bit kernel ABI byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ork::npu::uapi {

// ---- ioctl numbers: DRM_IOWR('d', 0x40 + nr, struct) -------------------------------------------
constexpr uint32_t kIocWrite = 1u, kIocRead = 2u;
constexpr uint32_t ioc(uint32_t dir, uint32_t type, uint32_t nr, uint32_t size) {
  return (dir << 30) | (size << 16) | (type << 8) | nr;
}
constexpr uint32_t kDrmCommandBase = 0x40;
constexpr uint32_t drm_iowr(uint32_t nr, uint32_t size) {
  return ioc(kIocRead | kIocWrite, 'd', kDrmCommandBase + nr, size);
}

enum Nr : uint32_t { kNrAction = 0, kNrSubmit = 1, kNrMemCreate = 2, kNrMemMap = 3, kNrMemDestroy = 4,
                     kNrMemSync = 5 };

// ---- action ---------------------------------------------------------------------------------------
struct Action {
  uint32_t flags;  // action code (ActionCode)
  uint32_t value;  // in/out
};
static_assert(sizeof(Action) == 8);
static_assert(offsetof(Action, value) == 4);

enum ActionCode : uint32_t {
  kActGetHwVersion = 0,
  kActGetDrvVersion = 1,  // major*10000 + minor*100 + patch
  kActReset = 6,
  kActGetTotalRwAmount = 17,
  kActGetTotalSramSize = 22,
  kActGetFreeSramSize = 23,
  kActGetIommuDomainId = 24,  // driver >= 0.9.6
  kActSetIommuDomainId = 25,  // driver >= 0.9.6
};

// ---- memory ---------------------------------------------------------------------------------------
// mem_create of drivers >= 0.9.6 (48 bytes). Older drivers take the first 40 bytes (no domain id).
struct MemCreate {
  uint32_t handle;      // out
  uint32_t flags;       // MemFlag bits
  uint64_t size;        // in: bytes (the driver rounds up to pages)
  uint64_t obj_addr;    // out: kernel cookie, passed back to destroy/sync and in task_obj_addr
  uint64_t dma_addr;    // out: the NPU (IOVA) address
  uint64_t sram_size;   // in
  int32_t iommu_domain_id;  // in (>= 0.9.6)
  uint32_t core_mask;       // reserved on RK3588: 0
};
static_assert(sizeof(MemCreate) == 48);
static_assert(offsetof(MemCreate, flags) == 4);
static_assert(offsetof(MemCreate, size) == 8);
static_assert(offsetof(MemCreate, obj_addr) == 16);
static_assert(offsetof(MemCreate, dma_addr) == 24);
static_assert(offsetof(MemCreate, sram_size) == 32);
static_assert(offsetof(MemCreate, iommu_domain_id) == 40);
static_assert(offsetof(MemCreate, core_mask) == 44);
constexpr uint32_t kMemCreateSizeLegacy = 40;  // drivers <= 0.9.5

struct MemMap {
  uint32_t handle;
  uint32_t reserved;
  uint64_t offset;  // out: the offset to pass to mmap() on the device fd
};
static_assert(sizeof(MemMap) == 16);
static_assert(offsetof(MemMap, offset) == 8);

struct MemDestroy {
  uint32_t handle;
  uint32_t reserved;
  uint64_t obj_addr;
};
static_assert(sizeof(MemDestroy) == 16);
static_assert(offsetof(MemDestroy, obj_addr) == 8);

struct MemSync {
  uint32_t flags;  // SyncFlag bits
  uint32_t reserved;
  uint64_t obj_addr;
  uint64_t offset;
  uint64_t size;
};
static_assert(sizeof(MemSync) == 32);
static_assert(offsetof(MemSync, obj_addr) == 8);
static_assert(offsetof(MemSync, offset) == 16);
static_assert(offsetof(MemSync, size) == 24);

enum MemFlag : uint32_t {
  kMemNonContiguous = 1u << 0,
  kMemCacheable = 1u << 1,
  kMemWriteCombine = 1u << 2,
  kMemKernelMapping = 1u << 3,  // required for the task array
  kMemIommu = 1u << 4,
  kMemZeroing = 1u << 5,
  kMemSecure = 1u << 6,
  kMemDma32 = 1u << 7,
  kMemTryAllocSram = 1u << 8,
  kMemTryAllocNbuf = 1u << 9,
  kMemIommuLimitIovaAlignment = 1u << 10,
};

enum SyncFlag : uint32_t { kSyncToDevice = 1u, kSyncFromDevice = 2u };

// ---- submit ---------------------------------------------------------------------------------------
#pragma pack(push, 1)
struct Task {
  uint32_t flags;
  uint32_t op_idx;
  uint32_t enable_mask;
  uint32_t int_mask;
  uint32_t int_clear;
  uint32_t int_status;
  uint32_t regcfg_amount;  // register command entries of this task, without the 4-entry PC tail
  uint32_t regcfg_offset;
  uint64_t regcmd_addr;    // NPU address of the task's register commands
};
#pragma pack(pop)
static_assert(sizeof(Task) == 40);
static_assert(offsetof(Task, regcfg_amount) == 24);
static_assert(offsetof(Task, regcmd_addr) == 32);

struct SubcoreTask {
  uint32_t task_start;
  uint32_t task_number;
};
static_assert(sizeof(SubcoreTask) == 8);

struct Submit {
  uint32_t flags;        // JobFlag bits
  uint32_t timeout;      // ms
  uint32_t task_start;
  uint32_t task_number;
  uint32_t task_counter;  // out
  int32_t priority;
  uint64_t task_obj_addr;   // obj_addr of the buffer holding the Task array
  uint32_t iommu_domain_id;
  uint32_t reserved;
  uint64_t task_base_addr;
  int64_t hw_elapse_time;  // out, ns
  uint32_t core_mask;      // CoreMask
  int32_t fence_fd;
  SubcoreTask subcore_task[5];
};
static_assert(sizeof(Submit) == 104);
static_assert(offsetof(Submit, timeout) == 4);
static_assert(offsetof(Submit, task_start) == 8);
static_assert(offsetof(Submit, task_number) == 12);
static_assert(offsetof(Submit, task_counter) == 16);
static_assert(offsetof(Submit, priority) == 20);
static_assert(offsetof(Submit, task_obj_addr) == 24);
static_assert(offsetof(Submit, iommu_domain_id) == 32);
static_assert(offsetof(Submit, reserved) == 36);
static_assert(offsetof(Submit, task_base_addr) == 40);
static_assert(offsetof(Submit, hw_elapse_time) == 48);
static_assert(offsetof(Submit, core_mask) == 56);
static_assert(offsetof(Submit, fence_fd) == 60);
static_assert(offsetof(Submit, subcore_task) == 64);

enum JobFlag : uint32_t { kJobPc = 1u, kJobNonblock = 2u, kJobPingpong = 4u, kJobFenceIn = 8u,
                          kJobFenceOut = 16u };

enum CoreMask : uint32_t { kCoreAuto = 0, kCore0 = 1, kCore1 = 2, kCore2 = 4 };

constexpr uint32_t kMaxDomains = 16;        // ids 0..15
constexpr uint32_t kMaxTasksPerKick = 4095;  // larger jobs are kicked in chunks

// ---- the numbers ----------------------------------------------------------------------------------
constexpr uint32_t kIoctlAction = drm_iowr(kNrAction, sizeof(Action));
constexpr uint32_t kIoctlSubmit = drm_iowr(kNrSubmit, sizeof(Submit));
constexpr uint32_t kIoctlMemCreate = drm_iowr(kNrMemCreate, sizeof(MemCreate));
constexpr uint32_t kIoctlMemCreateLegacy = drm_iowr(kNrMemCreate, kMemCreateSizeLegacy);
constexpr uint32_t kIoctlMemMap = drm_iowr(kNrMemMap, sizeof(MemMap));
constexpr uint32_t kIoctlMemDestroy = drm_iowr(kNrMemDestroy, sizeof(MemDestroy));
constexpr uint32_t kIoctlMemSync = drm_iowr(kNrMemSync, sizeof(MemSync));
static_assert(kIoctlAction == 0xC0086440u);
static_assert(kIoctlSubmit == 0xC0686441u);
static_assert(kIoctlMemCreate == 0xC0306442u);
static_assert(kIoctlMemCreateLegacy == 0xC0286442u);
static_assert(kIoctlMemMap == 0xC0106443u);
static_assert(kIoctlMemDestroy == 0xC0106444u);
static_assert(kIoctlMemSync == 0xC0206445u);

// ---- DRM core requests used for dma-buf import (include/uapi/drm/drm.h) --------------------------
// struct drm_prime_handle: PRIME_FD_TO_HANDLE turns a dma-buf fd into a GEM handle of this file.
struct DrmPrimeHandle {
  uint32_t handle;  // out
  uint32_t flags;   // in: DRM_CLOEXEC / DRM_RDWR (only for HANDLE_TO_FD); 0 here
  int32_t fd;       // in: the dma-buf
};
static_assert(sizeof(DrmPrimeHandle) == 12);
static_assert(offsetof(DrmPrimeHandle, flags) == 4);
static_assert(offsetof(DrmPrimeHandle, fd) == 8);

// struct drm_gem_close: drops a GEM handle of this file (the object goes with its last reference).
struct DrmGemClose {
  uint32_t handle;
  uint32_t pad;
};
static_assert(sizeof(DrmGemClose) == 8);

// DRM_IOWR(0x2e, struct drm_prime_handle), DRM_IOW(0x09, struct drm_gem_close): core DRM numbers,
// outside the driver range (no kDrmCommandBase).
constexpr uint32_t kIoctlPrimeFdToHandle = ioc(kIocRead | kIocWrite, 'd', 0x2e, sizeof(DrmPrimeHandle));
constexpr uint32_t kIoctlGemClose = ioc(kIocWrite, 'd', 0x09, sizeof(DrmGemClose));
static_assert(kIoctlPrimeFdToHandle == 0xC00C642Eu);
static_assert(kIoctlGemClose == 0x40086409u);

// struct dma_buf_sync and DMA_BUF_IOCTL_SYNC = _IOW('b', 0, struct dma_buf_sync) (Linux
// include/uapi/linux/dma-buf.h): the CPU-access bracket of a dma-buf, START then END.
struct DmaBufSync {
  uint64_t flags;
};
static_assert(sizeof(DmaBufSync) == 8);
constexpr uint64_t kDmaBufSyncRead = 1, kDmaBufSyncWrite = 2, kDmaBufSyncStart = 0, kDmaBufSyncEnd = 4;
constexpr uint32_t kIoctlDmaBufSync = ioc(kIocWrite, 'b', 0, sizeof(DmaBufSync));
static_assert(kIoctlDmaBufSync == 0x40086200u);

// Driver version 0.9.6: below it ork sends the 40-byte mem_create and uses one domain. IOMMU domains
// are documented in 0.9.7 (rknpu_drv.h "20240424"); which release added them is not in the public
// sources, and happyme531 requires 0.9.8 for domains other than 0 (docs/hardware.md).
constexpr uint32_t kDrvVersionDomains = 906;

}  // namespace ork::npu::uapi
