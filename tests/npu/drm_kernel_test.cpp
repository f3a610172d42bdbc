#include "npu/drm_kernel.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "npu/device.h"

namespace ork::npu {
namespace {

TEST(DrmKernel, MemCreateIoctlFollowsDriverVersion) {
  EXPECT_EQ(mem_create_ioctl_for(905), 0xC0286442u);  // 0.9.5: 40-byte struct
  EXPECT_EQ(mem_create_ioctl_for(800), 0xC0286442u);
  EXPECT_EQ(mem_create_ioctl_for(906), 0xC0306442u);  // 0.9.6: 48 bytes with the domain id
  EXPECT_EQ(mem_create_ioctl_for(908), 0xC0306442u);
  EXPECT_FALSE(driver_has_domains(905));
  EXPECT_TRUE(driver_has_domains(906));
  EXPECT_EQ(domains_for(905), 1u);
  EXPECT_EQ(domains_for(908), 16u);
  EXPECT_EQ(format_driver_version(908), "0.9.8");
  EXPECT_EQ(format_driver_version(10203), "1.2.3");
  EXPECT_EQ(kIoctlDrmVersion, 0xC0406400u);
}

TEST(DrmKernel, DiscoveryOnAMissingDirectoryFindsNothing) {
  const DrmNodeSearch r = find_rknpu_node("/nonexistent/dri");
  EXPECT_FALSE(r.path);
  EXPECT_NE(r.detail.find("/nonexistent/dri"), std::string::npos);
}

TEST(DrmKernel, DiscoveryIgnoresNodesThatAreNotRknpu) {
  const auto dir = std::filesystem::temp_directory_path() / ("ork_dri_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* n : {"renderD128", "card0", "by-path"}) std::ofstream(dir / n) << "not a device";
  const DrmNodeSearch r = find_rknpu_node(dir.string());
  EXPECT_FALSE(r.path);
  EXPECT_NE(r.detail.find("no rknpu node among 2 DRM nodes"), std::string::npos) << r.detail;
  try {
    DrmKernel k((dir / "renderD128").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not an rknpu device"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(DrmKernel, DiscoveryOnThisMachineIsClean) {
  const DrmNodeSearch r = find_rknpu_node();
  if (r.path) GTEST_SKIP() << "an rknpu device is present: " << *r.path;
  EXPECT_FALSE(r.detail.empty());
  EXPECT_EQ(DrmKernel::open_default(), nullptr);
}

TEST(DrmKernel, OpeningAMissingPathThrowsNamingIt) {
  try {
    DrmKernel k("/nonexistent/renderD129");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/renderD129"), std::string::npos);
  }
}

}  // namespace
}  // namespace ork::npu

// ---- dma-buf import over a recording fake of the driver (no NPU is attached here) -------------------

namespace ork::npu {
namespace {

// Records every request (number and argument bytes) and answers like the rknpu driver would.
struct FakeDriver {
  struct Call {
    unsigned long request;
    std::vector<uint8_t> arg;
  };
  std::vector<Call> calls;
  uint32_t prime_handle = 7;
  uint64_t object_size = 3 * 4096;  // the dma-buf's size, as the driver reports it
  int fail_request = 0;             // a request number to fail with fail_errno
  int fail_errno = 0;

  DrmKernel::IoctlFn fn() {
    return [this](int, unsigned long request, void* arg) -> int {
      const size_t size = (request >> 16) & 0x3fff;
      const auto* p = static_cast<const uint8_t*>(arg);
      calls.push_back({request, std::vector<uint8_t>(p, p + size)});
      if (fail_request != 0 && request == unsigned(fail_request)) return fail_errno;
      if (request == uapi::kIoctlPrimeFdToHandle) static_cast<uapi::DrmPrimeHandle*>(arg)->handle = prime_handle;
      if (request == uapi::kIoctlMemCreate) {
        auto* c = static_cast<uapi::MemCreate*>(arg);
        if (c->handle != prime_handle) return EINVAL;  // only the import is answered here
        c->size = object_size;
        c->dma_addr = 0x40100000;
        c->obj_addr = 0xffffff8001234000;
      }
      return 0;
    };
  }
  template <class T>
  T arg(size_t i) const {
    T t{};
    EXPECT_EQ(calls.at(i).arg.size(), sizeof(T));
    std::memcpy(&t, calls.at(i).arg.data(), std::min(sizeof(T), calls.at(i).arg.size()));
    return t;
  }
};

int make_memfd(uint64_t size) {
  const int fd = ::memfd_create("ork-dmabuf", 0);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::ftruncate(fd, off_t(size)), 0);
  return fd;
}

TEST(DrmKernelImport, SendsSetDomainPrimeFdToHandleThenMemCreateNamingTheHandle) {
  FakeDriver drv;
  DrmKernel k(-1, 908, "fake", drv.fn());
  const int fd = make_memfd(3 * 4096);
  uapi::MemCreate c{};
  c.flags = kDefaultBufferFlags;
  c.size = 10000;
  c.iommu_domain_id = 3;
  ASSERT_EQ(k.import_fd(fd, c), 0);
  ASSERT_EQ(drv.calls.size(), 3u);
  EXPECT_EQ(drv.calls[0].request, 0xC0086440u);  // ACTION
  const auto act = drv.arg<uapi::Action>(0);
  EXPECT_EQ(act.flags, uint32_t(uapi::kActSetIommuDomainId));
  EXPECT_EQ(act.value, 3u);
  EXPECT_EQ(drv.calls[1].request, 0xC00C642Eu);  // DRM_IOCTL_PRIME_FD_TO_HANDLE
  const auto prime = drv.arg<uapi::DrmPrimeHandle>(1);
  EXPECT_EQ(prime.fd, fd);
  EXPECT_EQ(prime.flags, 0u);
  EXPECT_EQ(prime.handle, 0u);
  EXPECT_EQ(drv.calls[2].request, 0xC0306442u);  // MEM_CREATE (48 bytes)
  const auto mc = drv.arg<uapi::MemCreate>(2);
  EXPECT_EQ(mc.handle, 7u);  // names the imported object: no new buffer
  EXPECT_EQ(mc.size, 10000u);
  EXPECT_EQ(mc.flags, kDefaultBufferFlags);
  EXPECT_EQ(mc.iommu_domain_id, 3);
  // Out: the object as the driver reported it, the size page-rounded.
  EXPECT_EQ(c.handle, 7u);
  EXPECT_EQ(c.size, 3u * 4096);
  EXPECT_EQ(c.dma_addr, 0x40100000u);
  EXPECT_EQ(c.obj_addr, 0xffffff8001234000u);

  // MEM_MAP is not sent (DRM refuses it for imports): the dma-buf itself is mapped.
  uapi::MemMap m{7, 0, 0};
  ASSERT_EQ(k.mem_map(m), 0);
  EXPECT_EQ(drv.calls.size(), 3u);
  void* p = k.mmap(m.offset, c.size);
  ASSERT_NE(p, nullptr);
  static_cast<char*>(p)[5] = 42;
  char byte = 0;
  ASSERT_EQ(::pread(fd, &byte, 1, 5), 1);
  EXPECT_EQ(byte, 42);  // the same memory
  EXPECT_EQ(k.munmap(p, c.size), 0);
  ::close(fd);  // the import holds its own reference to the dma-buf

  // Destroy: switch to the import's domain, then close the handle.
  uapi::MemDestroy d{7, 0, c.obj_addr};
  ASSERT_EQ(k.mem_destroy(d), 0);
  ASSERT_EQ(drv.calls.size(), 5u);
  EXPECT_EQ(drv.calls[3].request, 0xC0086440u);
  EXPECT_EQ(drv.arg<uapi::Action>(3).value, 3u);
  EXPECT_EQ(drv.calls[4].request, 0x40086409u);  // DRM_IOCTL_GEM_CLOSE
  EXPECT_EQ(drv.arg<uapi::DrmGemClose>(4).handle, 7u);
  // A buffer of ork's own is still destroyed with MEM_DESTROY and mapped with MEM_MAP.
  uapi::MemDestroy own{9, 0, 0x1000};
  ASSERT_EQ(k.mem_destroy(own), 0);
  EXPECT_EQ(drv.calls.back().request, uapi::kIoctlMemDestroy);
  uapi::MemMap om{9, 0, 0};
  ASSERT_EQ(k.mem_map(om), 0);
  EXPECT_EQ(drv.calls.back().request, uapi::kIoctlMemMap);
}

TEST(DrmKernelImport, FailuresCloseTheHandleAndReportTheErrno) {
  const int fd = make_memfd(4096);
  {  // MEM_CREATE refused: the GEM handle is closed again
    FakeDriver drv;
    drv.fail_request = int(uapi::kIoctlMemCreate);
    drv.fail_errno = EFAULT;
    DrmKernel k(-1, 908, "fake", drv.fn());
    uapi::MemCreate c{};
    c.size = 4096;
    EXPECT_EQ(k.import_fd(fd, c), EFAULT);
    ASSERT_EQ(drv.calls.size(), 4u);
    EXPECT_EQ(drv.calls[3].request, uapi::kIoctlGemClose);
    EXPECT_EQ(drv.arg<uapi::DrmGemClose>(3).handle, 7u);
    EXPECT_EQ(c.handle, 0u);  // nothing written on failure
  }
  {  // the dma-buf is smaller than the size asked
    FakeDriver drv;
    drv.object_size = 4096;
    DrmKernel k(-1, 908, "fake", drv.fn());
    uapi::MemCreate c{};
    c.size = 8192;
    EXPECT_EQ(k.import_fd(fd, c), EINVAL);
    EXPECT_EQ(drv.calls.back().request, uapi::kIoctlGemClose);
  }
  {  // PRIME_FD_TO_HANDLE refused (not a dma-buf): nothing to close
    FakeDriver drv;
    drv.fail_request = int(uapi::kIoctlPrimeFdToHandle);
    drv.fail_errno = EBADF;
    DrmKernel k(-1, 908, "fake", drv.fn());
    uapi::MemCreate c{};
    c.size = 4096;
    EXPECT_EQ(k.import_fd(fd, c), EBADF);
    EXPECT_EQ(drv.calls.size(), 2u);
  }
  {  // interrupted requests are retried
    FakeDriver drv;
    int interrupts = 2;
    auto inner = drv.fn();
    DrmKernel k(-1, 908, "fake", [&](int f, unsigned long r, void* a) {
      if (r == uapi::kIoctlPrimeFdToHandle && interrupts > 0) {
        --interrupts;
        return EINTR;
      }
      return inner(f, r, a);
    });
    uapi::MemCreate c{};
    c.size = 4096;
    EXPECT_EQ(k.import_fd(fd, c), 0);
    uapi::MemDestroy d{c.handle, 0, c.obj_addr};
    EXPECT_EQ(k.mem_destroy(d), 0);
  }
  {  // a driver before 0.9.6: one domain, no domain switch, the 40-byte MEM_CREATE
    FakeDriver drv;
    DrmKernel k(-1, 905, "fake", drv.fn());
    uapi::MemCreate c{};
    c.size = 4096;
    c.iommu_domain_id = 1;
    EXPECT_EQ(k.import_fd(fd, c), EINVAL);
    EXPECT_TRUE(drv.calls.empty());
    c.iommu_domain_id = 0;
    ASSERT_EQ(k.import_fd(fd, c), 0);
    ASSERT_EQ(drv.calls.size(), 2u);
    EXPECT_EQ(drv.calls[0].request, uapi::kIoctlPrimeFdToHandle);
    EXPECT_EQ(drv.calls[1].request, 0xC0286442u);
    EXPECT_EQ(drv.arg<uapi::DrmPrimeHandle>(0).fd, fd);
  }
  FakeDriver drv;
  DrmKernel k(-1, 908, "fake", drv.fn());
  uapi::MemCreate c{};
  c.size = 4096;
  EXPECT_EQ(k.import_fd(-1, c), EBADF);
  c.size = 0;
  EXPECT_EQ(k.import_fd(fd, c), EINVAL);
  EXPECT_TRUE(drv.calls.empty());
  ::close(fd);
}

}  // namespace
}  // namespace ork::npu

namespace ork::npu {
namespace {

TEST(DrmKernelImport, SyncOfAnImportUsesTheDmaBufNotMemSync) {
  FakeDriver drv;
  std::vector<int> fds;
  DrmKernel::IoctlFn inner = drv.fn();
  DrmKernel k(-1, 908, "fake", [&](int fd, unsigned long request, void* arg) {
    fds.push_back(fd);
    return inner(fd, request, arg);
  });
  const int fd = make_memfd(3 * 4096);
  uapi::MemCreate c{};
  c.size = 4096;
  ASSERT_EQ(k.import_fd(fd, c), 0);
  const size_t before = drv.calls.size();
  ASSERT_EQ(k.sync_dmabuf(c.handle, uapi::kSyncToDevice), 0);
  ASSERT_EQ(drv.calls.size(), before + 2);
  EXPECT_EQ(drv.calls[before].request, 0x40086200u);  // DMA_BUF_IOCTL_SYNC
  EXPECT_EQ(drv.arg<uapi::DmaBufSync>(before).flags, uapi::kDmaBufSyncStart | uapi::kDmaBufSyncWrite);
  EXPECT_EQ(drv.arg<uapi::DmaBufSync>(before + 1).flags, uapi::kDmaBufSyncEnd | uapi::kDmaBufSyncWrite);
  EXPECT_NE(fds[before], -1);  // on the import's dma-buf, not the DRM fd
  EXPECT_NE(fds[before], fd);  // its own dup: the caller's fd may be closed
  ASSERT_EQ(k.sync_dmabuf(c.handle, uapi::kSyncFromDevice), 0);
  EXPECT_EQ(drv.arg<uapi::DmaBufSync>(before + 2).flags, uapi::kDmaBufSyncStart | uapi::kDmaBufSyncRead);
  EXPECT_EQ(k.sync_dmabuf(99, uapi::kSyncToDevice), EINVAL);  // not an import
  ::close(fd);
}

TEST(DrmKernel, RetriesOfEagainAreBounded) {
  int calls = 0;
  DrmKernel k(-1, 908, "fake", [&](int, unsigned long, void*) {
    ++calls;
    return EAGAIN;
  });
  uapi::Action a{uapi::kActGetDrvVersion, 0};
  EXPECT_EQ(k.action(a), EAGAIN);
  EXPECT_EQ(calls, DrmKernel::kMaxIoctlRetries + 1);
  int transient = 0;
  DrmKernel j(-1, 908, "fake", [&](int, unsigned long, void*) { return ++transient < 3 ? EINTR : 0; });
  EXPECT_EQ(j.action(a), 0);
  EXPECT_EQ(transient, 3);
}

}  // namespace
}  // namespace ork::npu
