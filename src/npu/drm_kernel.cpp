#include "npu/drm_kernel.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

DrmKernel::DrmKernel(const std::string& path) : path_(path) {
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
  if (fd_ >= 0) ::close(fd_);
}

int DrmKernel::ioctl_retry(unsigned long request, void* arg) const {
  for (;;) {
    if (::ioctl(fd_, request, arg) == 0) return 0;
    if (errno != EINTR && errno != EAGAIN) return errno;
  }
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

int DrmKernel::mem_map(uapi::MemMap& m) { return ioctl_retry(uapi::kIoctlMemMap, &m); }

int DrmKernel::mem_destroy(uapi::MemDestroy& d) { return ioctl_retry(uapi::kIoctlMemDestroy, &d); }

int DrmKernel::mem_sync(uapi::MemSync& s) { return ioctl_retry(uapi::kIoctlMemSync, &s); }

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
