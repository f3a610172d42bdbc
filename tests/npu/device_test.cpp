#include "npu/device.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "core/error.h"
#include "npu/drm_kernel.h"
#include "npu/regcmd_gen.h"

namespace ork::npu {
namespace {

constexpr uint64_t kMiB = uint64_t(1) << 20;
constexpr uint64_t kGiB = uint64_t(1) << 30;

// The Device's counters must agree with the simulator's ground truth.
void expect_counters_agree(Device& dev) {
  const Counters c = dev.counters();
  const sim::SimStats s = dev.sim_kernel()->stats();
  for (uint32_t d = 0; d < uapi::kMaxDomains; ++d) {
    EXPECT_EQ(c.mapped_bytes[d], s.domains[d].mapped_bytes) << "domain " << d;
    EXPECT_EQ(c.peak_mapped_bytes[d], s.domains[d].peak_mapped_bytes) << "domain " << d;
  }
  EXPECT_EQ(c.total_mapped_bytes, s.total_mapped_bytes);
  EXPECT_EQ(c.peak_total_mapped_bytes, s.peak_total_mapped_bytes);
  EXPECT_EQ(c.creates, s.creates);
  EXPECT_EQ(c.destroys, s.destroys);
  EXPECT_EQ(c.domain_switches, s.domain_switches);
  EXPECT_EQ(c.submits, s.submits);
  EXPECT_EQ(c.faults, s.faults);
  EXPECT_EQ(c.syncs, s.syncs);
}

TEST(Device, OpenSimReportsCapabilities) {
  auto dev = Device::open_sim({256 * kMiB, 4, 2});
  const Capabilities& caps = dev->caps();
  EXPECT_EQ(caps.name, "sim");
  EXPECT_TRUE(caps.simulated);
  EXPECT_EQ(caps.cores, 2u);
  EXPECT_EQ(caps.domains, 4u);
  EXPECT_EQ(caps.window_bytes, 256 * kMiB);
  EXPECT_EQ(caps.driver_version, 908u);
  ASSERT_NE(dev->sim_kernel(), nullptr);
}

TEST(Device, BufferIsRaiiAndViewsDoNotFree) {
  auto dev = Device::open_sim();
  {
    Buffer b = dev->alloc(5000, 1);
    ASSERT_TRUE(b);
    EXPECT_TRUE(b.owns());
    EXPECT_EQ(b.size(), 8192u);
    EXPECT_EQ(b.domain(), 1u);
    EXPECT_NE(b.iova(), 0u);
    ASSERT_NE(b.host(), nullptr);
    EXPECT_EQ(b.host()[100], 0);
    std::memset(b.host(), 0xab, b.size());
    {
      Buffer v = b.view(4096, 100);
      EXPECT_FALSE(v.owns());
      EXPECT_EQ(v.iova(), b.iova() + 4096);
      EXPECT_EQ(v.host(), b.host() + 4096);
      EXPECT_EQ(v.size(), 100u);
      EXPECT_EQ(v.handle(), b.handle());
      EXPECT_EQ(v.obj_addr(), b.obj_addr());
      Buffer vv = v.view(10, 20);
      EXPECT_EQ(vv.iova(), b.iova() + 4106);
      EXPECT_THROW(v.view(90, 11), Error);
    }
    EXPECT_EQ(dev->sim_kernel()->stats().live_buffers, 1u);  // views went, the buffer stays
    EXPECT_EQ(b.host()[5000], 0xab);
    Buffer moved = std::move(b);
    EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    EXPECT_TRUE(moved);
    EXPECT_EQ(dev->sim_kernel()->stats().live_buffers, 1u);
  }
  EXPECT_EQ(dev->sim_kernel()->stats().live_buffers, 0u);
  EXPECT_EQ(dev->counters().destroys, 1u);
  Buffer r = dev->alloc(4096, 0);
  r.reset();
  EXPECT_FALSE(r);
  EXPECT_EQ(dev->sim_kernel()->stats().live_buffers, 0u);
  r.reset();  // idempotent
  expect_counters_agree(*dev);
}

TEST(Device, AllocErrorNamesDomainSizeAndErrno) {
  auto dev = Device::open_sim();
  std::vector<Buffer> held;
  for (int i = 0; i < 63; ++i) held.push_back(dev->alloc(64 * kMiB, 3));
  try {
    dev->alloc(64 * kMiB, 3);
    FAIL() << "the 64th 64 MiB buffer must not map";
  } catch (const AllocError& e) {
    EXPECT_STREQ(e.what(), "cannot map 64 MiB in IOMMU domain 3: errno 14 (Bad address)");
    EXPECT_EQ(e.domain(), 3u);
    EXPECT_EQ(e.size(), 64 * kMiB);
    EXPECT_EQ(e.err(), EFAULT);
  }
  held.pop_back();  // freeing one makes room again
  EXPECT_NO_THROW(held.push_back(dev->alloc(64 * kMiB, 3)));
  try {
    dev->alloc(3 * kGiB, 0);
    FAIL();
  } catch (const AllocError& e) {
    EXPECT_STREQ(e.what(), "cannot map 3 GiB in IOMMU domain 0: errno 14 (Bad address)");
  }
  EXPECT_THROW(dev->alloc(4096, 16), AllocError);
  EXPECT_THROW(dev->alloc(0, 0), AllocError);
  expect_counters_agree(*dev);
}

TEST(Device, DomainBeyondTheDevicesDomainsIsRefused) {
  auto dev = Device::open_sim({4 * kGiB, 1, 3});
  try {
    dev->alloc(4096, 1);
    FAIL();
  } catch (const AllocError& e) {
    EXPECT_EQ(e.err(), EINVAL);
    EXPECT_EQ(e.domain(), 1u);
  }
}

TEST(Device, SyncThroughViewsAndBounds) {
  auto dev = Device::open_sim();
  Buffer b = dev->alloc(16384, 0);
  b.sync_to_device();
  b.sync_from_device(4096, 4096);
  Buffer v = b.view(8192, 4096);
  v.sync_to_device(100, UINT64_MAX);  // clamped to the view's end
  EXPECT_THROW(v.sync_to_device(4097), Error);
  EXPECT_THROW(b.sync_from_device(16385), Error);
  EXPECT_EQ(dev->counters().syncs, 3u);
  expect_counters_agree(*dev);
}

TEST(Device, FaultingSubmitThrowsWithTheKernelsText) {
  auto dev = Device::open_sim();
  Buffer tasks = dev->alloc(4096, 2, kTaskBufferFlags);
  auto* t = reinterpret_cast<uapi::Task*>(tasks.host());
  t[0] = uapi::Task{};
  t[0].enable_mask = 0xd;
  t[0].int_mask = 0x300;
  t[0].int_clear = 0x1ffff;
  t[0].regcfg_amount = 104;
  t[0].regcmd_addr = 0x100000;  // unmapped
  tasks.sync_to_device();
  uapi::Submit s{};
  s.flags = uapi::kJobPc;
  s.task_number = 1;
  s.task_obj_addr = tasks.obj_addr();
  s.iommu_domain_id = 2;
  s.core_mask = uapi::kCore0;
  s.subcore_task[0] = {0, 1};
  try {
    dev->submit(s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("NPU fault: task touched unmapped address 0x100000 in domain 2", 0), 0u)
        << e.what();
  }
  s.task_number = 0;
  try {
    dev->submit(s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "NPU submit failed in domain 2: errno 22 (Invalid argument)");
  }
  EXPECT_EQ(dev->counters().faults, 1u);
  expect_counters_agree(*dev);
}

// An int8 matmul of ones through the real register-command generator and the simulated core:
// C (4×32) = A (4×32) · Bᵀ, every element 32, whatever the native layouts.
TEST(Device, SubmitRunsAMatmulOnEveryCore) {
  auto dev = Device::open_sim();
  Buffer a = dev->alloc(4 * 32, 1);
  Buffer b = dev->alloc(32 * 32, 1);
  Buffer c = dev->alloc(4 * 32 * 4, 1);
  Buffer regcmd = dev->alloc(3 * kRegcmdStride, 1);
  Buffer tasks = dev->alloc(3 * sizeof(uapi::Task), 0, kTaskBufferFlags);
  std::memset(a.host(), 1, a.size());
  std::memset(b.host(), 1, b.size());
  auto* t = reinterpret_cast<uapi::Task*>(tasks.host());
  for (uint32_t i = 0; i < 3; ++i) {
    MatmulTaskDesc d;
    d.dtype = Dtype::kI8;
    d.m = 4;
    d.k = 32;
    d.n = 32;
    d.a_addr = uint32_t(a.iova());
    d.b_addr = uint32_t(b.iova());
    d.c_addr = uint32_t(c.iova());
    gen_matmul_regcmd(d, reinterpret_cast<uint64_t*>(regcmd.host() + i * kRegcmdStride));
    t[i] = uapi::Task{};
    t[i].enable_mask = 0xd;
    t[i].int_mask = 0x300;
    t[i].int_clear = 0x1ffff;
    t[i].regcfg_amount = kMatmulEntries - 4;
    t[i].regcmd_addr = regcmd.iova() + i * kRegcmdStride;
  }
  uapi::Submit s{};
  s.flags = uapi::kJobPc;
  s.task_number = 3;
  s.task_obj_addr = tasks.obj_addr();
  s.iommu_domain_id = 1;
  s.core_mask = 7;
  s.subcore_task[2] = {0, 1};
  s.subcore_task[3] = {1, 1};
  s.subcore_task[4] = {2, 1};
  dev->submit(s);
  EXPECT_EQ(s.task_counter, 3u);
  EXPECT_GE(s.hw_elapse_time, 0);
  c.sync_from_device();
  const auto* out = reinterpret_cast<const int32_t*>(c.host());
  for (int i = 0; i < 4 * 32; ++i) ASSERT_EQ(out[i], 32) << "element " << i;
  EXPECT_EQ(dev->counters().submits, 1u);
  expect_counters_agree(*dev);
}

TEST(Device, CountersAgreeAcrossDomainsAndThreads) {
  auto dev = Device::open_sim();
  {
    std::vector<Buffer> keep;
    keep.push_back(dev->alloc(64 * kMiB, 0));
    keep.push_back(dev->alloc(3 * kMiB, 4));
    keep.push_back(dev->alloc(4096, 4));
    keep.push_back(dev->alloc(kMiB, 0));
    keep.erase(keep.begin() + 1);
    expect_counters_agree(*dev);
  }
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < 4; ++i) {
    threads.emplace_back([&dev, i] {
      for (int j = 0; j < 50; ++j) {
        Buffer x = dev->alloc(uint64_t(j % 7 + 1) * 4096, i % 2);
        x.host()[0] = uint8_t(j);
        x.sync_to_device();
      }
    });
  }
  for (auto& th : threads) th.join();
  const Counters c = dev->counters();
  const sim::SimStats s = dev->sim_kernel()->stats();
  EXPECT_EQ(c.creates, 204u);
  EXPECT_EQ(c.destroys, 204u);
  EXPECT_EQ(c.total_mapped_bytes, 0u);
  EXPECT_EQ(s.live_buffers, 0u);
  EXPECT_EQ(c.creates, s.creates);
  EXPECT_EQ(c.syncs, s.syncs);
  EXPECT_EQ(c.peak_total_mapped_bytes, s.peak_total_mapped_bytes);
}

TEST(Device, OpenKinds) {
  if (find_rknpu_node().path) GTEST_SKIP() << "an rknpu device is present";
  DeviceOptions o;
  o.kind = "npu";
  try {
    Device::open(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "no RK3588 NPU found (rknpu driver not present): use --device sim or cpu");
  }
  o.kind = "auto";
  o.sim_domains = 2;
  auto dev = Device::open(o);
  EXPECT_TRUE(dev->caps().simulated);
  EXPECT_EQ(dev->caps().domains, 2u);
  o.kind = "sim";
  EXPECT_TRUE(Device::open(o)->caps().simulated);
  o.kind = "gpu";
  EXPECT_THROW(Device::open(o), Error);
  o.kind = "sim";
  o.sim_cores = 5;
  EXPECT_THROW(Device::open(o), Error);
}

TEST(Device, OptionsFromEnvironment) {
  ::unsetenv("ORK_SIM_WINDOW_MB");
  ::unsetenv("ORK_SIM_DOMAINS");
  ::unsetenv("ORK_SIM_CORES");
  DeviceOptions d = DeviceOptions::from_env();
  EXPECT_EQ(d.sim_window_bytes, 4 * kGiB);
  EXPECT_EQ(d.sim_domains, 16u);
  EXPECT_EQ(d.sim_cores, 3u);
  ::setenv("ORK_SIM_WINDOW_MB", "256", 1);
  ::setenv("ORK_SIM_DOMAINS", "8", 1);
  ::setenv("ORK_SIM_CORES", "1", 1);
  d = DeviceOptions::from_env();
  EXPECT_EQ(d.sim_window_bytes, 256 * kMiB);
  EXPECT_EQ(d.sim_domains, 8u);
  EXPECT_EQ(d.sim_cores, 1u);
  const std::pair<const char*, const char*> bad[] = {{"ORK_SIM_WINDOW_MB", "0"}, {"ORK_SIM_WINDOW_MB", "8192"},
                                                     {"ORK_SIM_WINDOW_MB", "abc"}, {"ORK_SIM_DOMAINS", "17"},
                                                     {"ORK_SIM_CORES", "4"}};
  for (const auto& [name, value] : bad) {
    ::setenv(name, value, 1);
    try {
      DeviceOptions::from_env();
      ADD_FAILURE() << name << "=" << value << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
    ::setenv(name, name == std::string("ORK_SIM_WINDOW_MB") ? "256" : "1", 1);
  }
  ::unsetenv("ORK_SIM_WINDOW_MB");
  ::unsetenv("ORK_SIM_DOMAINS");
  ::unsetenv("ORK_SIM_CORES");
}

TEST(Device, FormatBytes) {
  EXPECT_EQ(format_bytes(64 * kMiB), "64 MiB");
  EXPECT_EQ(format_bytes(3 * kGiB), "3 GiB");
  EXPECT_EQ(format_bytes(12 * 1024), "12 KiB");
  EXPECT_EQ(format_bytes(100), "100 bytes");
  EXPECT_EQ(format_bytes(0), "0 bytes");
}

}  // namespace
}  // namespace ork::npu

namespace ork::npu {
namespace {

TEST(DeviceDriver, SyncAndReleaseSwitchDomainsAndImportsSyncThroughTheDmaBuf) {
  auto dev = Device::open_sim({});
  Buffer a = dev->alloc(4096, 0);
  Buffer b = dev->alloc(4096, 3);    // switch to 3
  a.sync_to_device();                // MEM_SYNC switches back to 0
  b.reset();                         // MEM_DESTROY switches to 3
  const int fd = ::memfd_create("ork-import", 0);
  ASSERT_EQ(::ftruncate(fd, 8192), 0);
  Buffer imp = dev->import_fd(fd, 8192, 1);  // switch to 1
  Buffer view = imp.view(4096, 4096);
  view.sync_to_device();             // no MEM_SYNC (the driver refuses imports): the dma-buf's sync
  imp.sync_from_device();
  ::close(fd);
  const Counters c = dev->counters();
  EXPECT_EQ(c.domain_switches, 4u);
  EXPECT_EQ(c.syncs, 3u);
  expect_counters_agree(*dev);
}

}  // namespace
}  // namespace ork::npu
