// DrmKernel — the real rknpu driver behind its DRM device file.
//
// Discovery: the node is found by driver name, not by path: every /dev/dri/renderD* and then
// card* node is opened and asked DRM_IOCTL_VERSION; the first whose driver is "rknpu" wins.
// Versions: GET_DRV_VERSION is read at open. Drivers before 0.9.6 have one IOMMU domain and a
// 40-byte mem_create (no domain id field); for them a request naming domain != 0 fails with EINVAL
// here, before reaching the driver, and the domain id is not sent.
//
// Import (import_fd): ACTION SET_IOMMU_DOMAIN_ID (drivers with domains: the dma-buf is mapped in the
// domain active at import), DRM_IOCTL_PRIME_FD_TO_HANDLE (a GEM handle for the dma-buf), then
// MEM_CREATE naming that handle, which the driver answers with the existing object's size, dma_addr
// and obj_addr instead of creating one. DRM refuses MEM_MAP (dumb map offset) for imported objects,
// so the import keeps a dup of the dma-buf fd and mmap() maps that; mem_destroy of an imported handle
// switches to its domain and closes the handle (GEM_CLOSE) — the memory stays the exporter's.
// Thread-safe: the object holds the fd, immutable facts and the imports (guarded by a mutex); the
// driver serializes its state.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "npu/kernel.h"

namespace ork::npu {

// DRM's struct drm_version (include/uapi/drm/drm.h), declared here from the standard DRM uapi.
struct DrmVersion {
  int32_t version_major;
  int32_t version_minor;
  int32_t version_patchlevel;
  uint64_t name_len;  // __kernel_size_t: in = buffer size, out = the full length
  char* name;
  uint64_t date_len;
  char* date;
  uint64_t desc_len;
  char* desc;
};
static_assert(sizeof(void*) == 8, "the rknpu uapi is declared for 64-bit user space");
static_assert(sizeof(DrmVersion) == 64);
// DRM_IOWR(0x00, struct drm_version)
constexpr uint32_t kIoctlDrmVersion = uapi::ioc(uapi::kIocRead | uapi::kIocWrite, 'd', 0x00, sizeof(DrmVersion));
static_assert(kIoctlDrmVersion == 0xC0406400u);

constexpr const char* kRknpuDriverName = "rknpu";

// What discovery found: the node's path, or why there is none.
struct DrmNodeSearch {
  std::optional<std::string> path;  // the rknpu node, when found
  std::string detail;               // when not found: what was looked at (e.g. a node not openable)
};

// Scans `dir` for renderD* then card* nodes whose DRM driver name is "rknpu". Never throws; a
// missing directory or unopenable nodes yield no path (with the reason in detail).
DrmNodeSearch find_rknpu_node(const std::string& dir = "/dev/dri");

// Whether a driver of this version (major*10000 + minor*100 + patch) has IOMMU domains and the
// 48-byte mem_create (>= 0.9.6).
constexpr bool driver_has_domains(uint32_t version) { return version >= uapi::kDrvVersionDomains; }
// The MEM_CREATE ioctl number to use with a driver of this version.
constexpr uint32_t mem_create_ioctl_for(uint32_t version) {
  return driver_has_domains(version) ? uapi::kIoctlMemCreate : uapi::kIoctlMemCreateLegacy;
}
// The number of usable IOMMU domains with a driver of this version.
constexpr uint32_t domains_for(uint32_t version) { return driver_has_domains(version) ? uapi::kMaxDomains : 1; }
// "0.9.8" from 908.
std::string format_driver_version(uint32_t version);

class DrmKernel final : public Kernel {
 public:
  static constexpr int kMaxIoctlRetries = 1000;  // per request, for EINTR / EAGAIN
  // How requests reach the driver: ioctl(fd, request, arg) → 0 or a positive errno. The default is
  // ::ioctl; tests pass a recording fake (no NPU is needed to check what would be sent).
  using IoctlFn = std::function<int(int fd, unsigned long request, void* arg)>;

  // Opens the rknpu node found by find_rknpu_node(), or nullptr when there is none.
  static std::unique_ptr<DrmKernel> open_default();
  // Opens `path`, checks that it is an rknpu node and reads the driver version. Throws ork::Error
  // naming the path when it cannot be opened, is not an rknpu node, or the version query fails.
  explicit DrmKernel(const std::string& path);
  // Over an already open node (fd may be -1 for a fake) of driver `version`, every request through
  // `ioctl`. Nothing is checked or sent here. The fd, when >= 0, is owned (closed on destruction).
  DrmKernel(int fd, uint32_t version, std::string path, IoctlFn ioctl);
  ~DrmKernel() override;
  DrmKernel(const DrmKernel&) = delete;
  DrmKernel& operator=(const DrmKernel&) = delete;

  int action(uapi::Action& a) override;
  int mem_create(uapi::MemCreate& c) override;
  int mem_map(uapi::MemMap& m) override;
  int mem_destroy(uapi::MemDestroy& d) override;
  int mem_sync(uapi::MemSync& s) override;
  // DMA_BUF_IOCTL_SYNC (START then END, READ for kSyncFromDevice / WRITE for kSyncToDevice) on the
  // import's dma-buf: the driver's MEM_SYNC refuses imports.
  int sync_dmabuf(uint32_t handle, uint32_t flags) override;
  int submit(uapi::Submit& s) override;
  int import_fd(int fd, uapi::MemCreate& c) override;
  void* mmap(uint64_t offset, uint64_t size) override;
  int munmap(void* address, uint64_t size) override;
  std::string describe_last_fault() const override;
  std::string name() const override;

  uint32_t driver_version() const { return version_; }
  const std::string& path() const { return path_; }

 private:
  // 0 or errno; retries EINTR and EAGAIN up to kMaxIoctlRetries times (EAGAIN after a 100 µs pause),
  // then returns the errno.
  int ioctl_retry(unsigned long request, void* arg) const;
  int ioctl_retry_fd(int fd, unsigned long request, void* arg) const;
  int set_domain(uint32_t domain);                          // ACTION SET_IOMMU_DOMAIN_ID (with domains)

  // An imported handle: the dup of its dma-buf (for mmap) and the domain it was mapped in.
  struct Import {
    int dmabuf = -1;
    uint32_t domain = 0;
  };
  // MEM_MAP offsets handed out for imports: this bit plus the handle (DRM's fake offsets stay far below).
  static constexpr uint64_t kImportOffsetBit = uint64_t(1) << 62;

  std::string path_;
  int fd_ = -1;
  uint32_t version_ = 0;
  IoctlFn ioctl_;
  std::mutex import_mutex_;
  std::map<uint32_t, Import> imports_;  // guarded by import_mutex_
  mutable std::mutex error_mutex_;
  std::string last_submit_error_;  // guarded by error_mutex_
};

}  // namespace ork::npu
