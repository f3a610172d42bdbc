#include "npu/drm_kernel.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ctime>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/log.h"

namespace ork::npu {

namespace {

// The DRM driver name of an open node, or "" when it is not a DRM node.
std::string drm_driver_name(int fd) {
  char name[64] = {};
  DrmVersion v{};
  v.name_len = sizeof(name) - 1;
  v.name = name;
  if (::ioctl(fd, kIoctlDrmVersion, &v) != 0) return "";
  const size_t n = std::min<uint64_t>(v.name_len, sizeof(name) - 1);
  return std::string(name, n);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

std::string format_driver_version(uint32_t version) {
  return str_cat(version / 10000, ".", version / 100 % 100, ".", version % 100);
}

DrmNodeSearch find_rknpu_node(const std::string& dir) {
  DrmNodeSearch result;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    result.detail = str_cat(dir, ": ", std::strerror(errno));
    return result;
  }
  std::vector<std::string> render, card;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (starts_with(n, "renderD")) render.push_back(n);
    else if (starts_with(n, "card")) card.push_back(n);
  }
  ::closedir(d);
  std::sort(render.begin(), render.end());
  std::sort(card.begin(), card.end());
  render.insert(render.end(), card.begin(), card.end());
  std::string skipped;
  for (const std::string& n : render) {
    const std::string path = dir + "/" + n;
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      skipped += str_cat(skipped.empty() ? "" : "; ", path, ": ", std::strerror(errno));
      continue;
    }
    const std::string driver = drm_driver_name(fd);
    ::close(fd);
    if (driver == kRknpuDriverName) {
      result.path = path;
      return result;
    }
  }
  result.detail = render.empty() ? str_cat("no DRM nodes in ", dir)
                                 : str_cat("no rknpu node among ", render.size(), " DRM nodes in ", dir,
                                           skipped.empty() ? "" : " (not openable: " + skipped + ")");
  return result;
}

std::unique_ptr<DrmKernel> DrmKernel::open_default() {
  const DrmNodeSearch found = find_rknpu_node();
  if (!found.path) {
    log::debug("rknpu driver not found: ", found.detail);
    return nullptr;
  }
  return std::make_unique<DrmKernel>(*found.path);
}

namespace {
int system_ioctl(int fd, unsigned long request, void* arg) { return ::ioctl(fd, request, arg) == 0 ? 0 : errno; }
}  // namespace

DrmKernel::DrmKernel(int fd, uint32_t version, std::string path, IoctlFn ioctl)
    : path_(std::move(path)), fd_(fd), version_(version), ioctl_(std::move(ioctl)) {}

DrmKernel::DrmKernel(const std::string& path) : path_(path), ioctl_(system_ioctl) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ORK_CHECK(fd_ >= 0, path, ": cannot open the NPU device: ", std::strerror(errno));
  const std::string driver = drm_driver_name(fd_);
  if (driver != kRknpuDriverName) {
    ::close(fd_);
    fail(path, ": not an rknpu device (DRM driver '", driver, "')");
  }
  uapi::Action a{uapi::kActGetDrvVersion, 0};
  const int err = ioctl_retry(uapi::kIoctlAction, &a);
  if (err != 0) {
    ::close(fd_);
    fail(path, ": GET_DRV_VERSION failed: errno ", err, " (", std::strerror(err), ")");
  }
  version_ = a.value;
  log::debug("rknpu ", format_driver_version(version_), " at ", path, driver_has_domains(version_)
                                                                       ? ""
                                                                       : " (before 0.9.6: one IOMMU domain)");
}

DrmKernel::~DrmKernel() {
  for (const auto& [handle, imp] : imports_) ::close(imp.dmabuf);
  if (fd_ >= 0) ::close(fd_);
}

int DrmKernel::ioctl_retry(unsigned long request, void* arg) const { return ioctl_retry_fd(fd_, request, arg); }

int DrmKernel::ioctl_retry_fd(int fd, unsigned long request, void* arg) const {
  int err = 0;
  for (int attempt = 0; attempt <= kMaxIoctlRetries; ++attempt) {
    err = ioctl_(fd, request, arg);
    if (err != EINTR && err != EAGAIN) return err;
    if (err == EAGAIN) {
      const timespec pause{0, 100 * 1000};
      ::nanosleep(&pause, nullptr);
    }
  }
  return err;
}

int DrmKernel::set_domain(uint32_t domain) {
  if (!driver_has_domains(version_)) return domain == 0 ? 0 : EINVAL;
  uapi::Action a{uapi::kActSetIommuDomainId, domain};
  return ioctl_retry(uapi::kIoctlAction, &a);
}

int DrmKernel::import_fd(int fd, uapi::MemCreate& c) {
  if (fd < 0) return EBADF;
  if (c.size == 0 || c.iommu_domain_id < 0) return EINVAL;
  const uint32_t domain = uint32_t(c.iommu_domain_id);
  if (!driver_has_domains(version_) && domain != 0) return EINVAL;
  // The attachment is mapped in the domain active at import time.
  if (const int err = set_domain(domain); err != 0) return err;
  uapi::DrmPrimeHandle prime{0, 0, fd};
  if (const int err = ioctl_retry(uapi::kIoctlPrimeFdToHandle, &prime); err != 0) return err;
  auto close_handle = [&] {
    uapi::DrmGemClose g{prime.handle, 0};
    ioctl_retry(uapi::kIoctlGemClose, &g);
  };
  // MEM_CREATE naming an existing handle: the driver reports that object (size, dma_addr, obj_addr).
  uapi::MemCreate q = c;
  q.handle = prime.handle;
  q.obj_addr = 0;
  q.dma_addr = 0;
  if (const int err = ioctl_retry(mem_create_ioctl_for(version_), &q); err != 0) {
    close_handle();
    return err;
  }
  if (q.size < c.size) {  // the dma-buf is smaller than the caller said
    close_handle();
    return EINVAL;
  }
  const int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) {
    const int err = errno;
    close_handle();
    return err;
  }
  {
    std::lock_guard lock(import_mutex_);
    imports_[prime.handle] = {dup, domain};
  }
  c.handle = prime.handle;
  c.size = (c.size + 4095) / 4096 * 4096;  // what is mapped: the requested bytes, page-rounded
  c.obj_addr = q.obj_addr;
  c.dma_addr = q.dma_addr;
  return 0;
}

int DrmKernel::action(uapi::Action& a) {
  if (!driver_has_domains(version_) &&
      (a.flags == uapi::kActGetIommuDomainId || a.flags == uapi::kActSetIommuDomainId)) {
    if (a.flags == uapi::kActGetIommuDomainId) {  // the one domain there is
      a.value = 0;
      return 0;
    }
    return a.value == 0 ? 0 : EINVAL;
  }
  return ioctl_retry(uapi::kIoctlAction, &a);
}

int DrmKernel::mem_create(uapi::MemCreate& c) {
  if (!driver_has_domains(version_)) {
    if (c.iommu_domain_id != 0) return EINVAL;
    // The legacy ioctl copies only the first 40 bytes: iommu_domain_id and core_mask are not sent.
  }
  return ioctl_retry(mem_create_ioctl_for(version_), &c);
}

int DrmKernel::mem_map(uapi::MemMap& m) {
  {
    std::lock_guard lock(import_mutex_);
    if (imports_.count(m.handle) != 0) {
      m.offset = kImportOffsetBit | m.handle;
      return 0;
    }
  }
  return ioctl_retry(uapi::kIoctlMemMap, &m);
}

int DrmKernel::mem_destroy(uapi::MemDestroy& d) {
  Import imp;
  {
    std::lock_guard lock(import_mutex_);
    const auto it = imports_.find(d.handle);
    if (it == imports_.end()) return ioctl_retry(uapi::kIoctlMemDestroy, &d);
    imp = it->second;
    imports_.erase(it);
  }
  ::close(imp.dmabuf);
  // The attachment is unmapped from the active domain when the object goes: make it the import's.
  const int switch_err = set_domain(imp.domain);
  uapi::DrmGemClose g{d.handle, 0};
  const int err = ioctl_retry(uapi::kIoctlGemClose, &g);
  return err != 0 ? err : switch_err;
}

int DrmKernel::mem_sync(uapi::MemSync& s) { return ioctl_retry(uapi::kIoctlMemSync, &s); }

int DrmKernel::sync_dmabuf(uint32_t handle, uint32_t flags) {
  int dmabuf = -1;
  {
    std::lock_guard lock(import_mutex_);
    const auto it = imports_.find(handle);
    if (it != imports_.end()) dmabuf = it->second.dmabuf;
  }
  if (dmabuf < 0) return EINVAL;
  if (flags != uapi::kSyncToDevice && flags != uapi::kSyncFromDevice) return EINVAL;
  const uint64_t dir = flags == uapi::kSyncToDevice ? uapi::kDmaBufSyncWrite : uapi::kDmaBufSyncRead;
  uapi::DmaBufSync start{uapi::kDmaBufSyncStart | dir}, end{uapi::kDmaBufSyncEnd | dir};
  if (const int err = ioctl_retry_fd(dmabuf, uapi::kIoctlDmaBufSync, &start); err != 0) return err;
  return ioctl_retry_fd(dmabuf, uapi::kIoctlDmaBufSync, &end);
}

int DrmKernel::submit(uapi::Submit& s) {
  if (!driver_has_domains(version_) && s.iommu_domain_id != 0) return EINVAL;
  const int err = ioctl_retry(uapi::kIoctlSubmit, &s);
  if (err != 0) {
    std::lock_guard lock(error_mutex_);
    last_submit_error_ = str_cat("submit in domain ", s.iommu_domain_id, " failed: errno ", err, " (",
                                 std::strerror(err), "); the kernel log (dmesg) names the faulting address");
  }
  return err;
}

void* DrmKernel::mmap(uint64_t offset, uint64_t size) {
  if ((offset & kImportOffsetBit) != 0) {  // an import: map the dma-buf itself
    int dmabuf = -1;
    {
      std::lock_guard lock(import_mutex_);
      const auto it = imports_.find(uint32_t(offset & 0xffffffffu));
      if (it != imports_.end()) dmabuf = it->second.dmabuf;
    }
    if (dmabuf < 0) {
      errno = EINVAL;
      return nullptr;
    }
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, off_t(offset));
  return p == MAP_FAILED ? nullptr : p;
}

int DrmKernel::munmap(void* address, uint64_t size) { return ::munmap(address, size) == 0 ? 0 : errno; }

std::string DrmKernel::describe_last_fault() const {
  std::lock_guard lock(error_mutex_);
  return last_submit_error_;
}

std::string DrmKernel::name() const {
  return str_cat("rknpu ", format_driver_version(version_), " (", path_, ")");
}

}  // namespace ork::npu
