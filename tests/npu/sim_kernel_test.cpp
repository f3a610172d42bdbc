#include "npu/sim/sim_kernel.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace ork::npu::sim {
namespace {

constexpr uint64_t kMiB = uint64_t(1) << 20;
constexpr uint64_t kGiB = uint64_t(1) << 30;

uapi::MemCreate create_req(uint64_t size, int32_t domain, uint32_t flags = uapi::kMemIommu) {
  uapi::MemCreate c{};
  c.size = size;
  c.flags = flags;
  c.iommu_domain_id = domain;
  return c;
}

// Creates `size` buffers in `domain` until failure; returns how many fit and the failing errno.
std::pair<uint64_t, int> fill(SimKernel& k, uint64_t size, int32_t domain) {
  uint64_t n = 0;
  for (;;) {
    auto c = create_req(size, domain);
    const int err = k.mem_create(c);
    if (err != 0) return {n, err};
    ++n;
  }
}

TEST(SimKernel, SixtyFourMiBWallAtNumber63WithEfault) {
  SimKernel k;
  const auto [n, err] = fill(k, 64 * kMiB, 0);
  EXPECT_EQ(n, 63u);
  EXPECT_EQ(err, EFAULT);
  const SimStats s = k.stats();
  EXPECT_EQ(s.domains[0].mapped_bytes, 63 * 64 * kMiB);  // 4.23 GB
  EXPECT_EQ(s.total_mapped_bytes, 4227858432u);
  EXPECT_EQ(s.live_buffers, 63u);
}

TEST(SimKernel, DomainsHaveIndependentWindows) {
  SimKernel k;
  for (int32_t d : {0, 3, 7, 15}) {
    const auto [n, err] = fill(k, 64 * kMiB, d);
    EXPECT_EQ(n, 63u) << "domain " << d;
    EXPECT_EQ(err, EFAULT);
  }
  const SimStats s = k.stats();
  EXPECT_EQ(s.total_mapped_bytes, 4 * 63 * 64 * kMiB);
  EXPECT_TRUE(s.domains[7].created);
  EXPECT_FALSE(s.domains[1].created);
  EXPECT_EQ(s.domains[15].live_buffers, 63u);
}

TEST(SimKernel, BufferLargerThanHalfTheWindowFailsWhenEmpty) {
  SimKernel k;
  auto c = create_req(2 * kGiB + 4096, 0);
  EXPECT_EQ(k.mem_create(c), EFAULT);
  auto d = create_req(3 * kGiB, 5);
  EXPECT_EQ(k.mem_create(d), EFAULT);
  auto e = create_req(2 * kGiB, 0);
  EXPECT_EQ(k.mem_create(e), 0);
  EXPECT_EQ(e.dma_addr, 2 * kGiB);
}

TEST(SimKernel, SmallerWindowKnob) {
  // 64 MiB window: a 64 MiB chunk needs address 0 → none fits; 16 MiB chunks: 4 slots − 1.
  SimKernel k(SimOptions{64 * kMiB, 16, 3});
  EXPECT_EQ(fill(k, 64 * kMiB, 0), std::make_pair(uint64_t(0), EFAULT));
  EXPECT_EQ(fill(k, 16 * kMiB, 1), std::make_pair(uint64_t(3), EFAULT));
  SimKernel k2(SimOptions{256 * kMiB, 2, 3});
  EXPECT_EQ(fill(k2, 64 * kMiB, 1), std::make_pair(uint64_t(3), EFAULT));
}

TEST(SimKernel, CreateFillsOutFieldsAndRoundsToPages) {
  SimKernel k;
  auto c = create_req(1, 0);
  ASSERT_EQ(k.mem_create(c), 0);
  EXPECT_NE(c.handle, 0u);
  EXPECT_EQ(c.size, 4096u);
  EXPECT_NE(c.obj_addr, 0u);
  EXPECT_NE(c.dma_addr, 0u);
  EXPECT_EQ(c.dma_addr % 4096, 0u);
  EXPECT_LT(c.dma_addr + c.size, (uint64_t(1) << 32) + 1);
  auto c2 = create_req(5000, 0);
  ASSERT_EQ(k.mem_create(c2), 0);
  EXPECT_EQ(c2.size, 8192u);
  EXPECT_NE(c2.handle, c.handle);
  EXPECT_NE(c2.obj_addr, c.obj_addr);
}

TEST(SimKernel, CreateErrors) {
  SimKernel k;
  auto zero = create_req(0, 0);
  EXPECT_EQ(k.mem_create(zero), EINVAL);
  auto d16 = create_req(4096, 16);
  EXPECT_EQ(k.mem_create(d16), EINVAL);
  auto dneg = create_req(4096, -1);
  EXPECT_EQ(k.mem_create(dneg), EINVAL);
  auto badflag = create_req(4096, 0, 1u << 20);
  EXPECT_EQ(k.mem_create(badflag), EINVAL);
  SimKernel one(SimOptions{4 * kGiB, 1, 3});
  auto d1 = create_req(4096, 1);
  EXPECT_EQ(one.mem_create(d1), EINVAL);
  auto d0 = create_req(4096, 0);
  EXPECT_EQ(one.mem_create(d0), 0);
  EXPECT_EQ(k.stats().creates, 0u);
}

TEST(SimKernel, MmapGivesZeroedHostMemoryOfTheBuffer) {
  SimKernel k;
  auto c = create_req(3 * 4096, 0, uapi::kMemIommu | uapi::kMemZeroing);
  ASSERT_EQ(k.mem_create(c), 0);
  uapi::MemMap m{c.handle, 0, 0};
  ASSERT_EQ(k.mem_map(m), 0);
  auto* p = static_cast<uint8_t*>(k.mmap(m.offset, c.size));
  ASSERT_NE(p, nullptr);
  for (uint64_t i = 0; i < c.size; i += 512) EXPECT_EQ(p[i], 0);
  p[0] = 7;
  EXPECT_EQ(static_cast<uint8_t*>(k.mmap(m.offset, 4096))[0], 7);
  EXPECT_EQ(k.mmap(m.offset, c.size + 1), nullptr);
  EXPECT_EQ(k.mmap(m.offset + 4096, 4096), nullptr);
  uapi::MemMap bad{9999, 0, 0};
  EXPECT_EQ(k.mem_map(bad), EINVAL);
  EXPECT_EQ(k.munmap(p, c.size), 0);
}

TEST(SimKernel, DestroyReclaimsIovaForReuse) {
  SimKernel k;
  auto a = create_req(64 * kMiB, 0);
  ASSERT_EQ(k.mem_create(a), 0);
  uapi::MemDestroy d{a.handle, 0, a.obj_addr};
  ASSERT_EQ(k.mem_destroy(d), 0);
  EXPECT_EQ(k.mem_destroy(d), EINVAL);  // already gone
  auto b = create_req(64 * kMiB, 0);
  ASSERT_EQ(k.mem_create(b), 0);
  EXPECT_EQ(b.dma_addr, a.dma_addr);
  uapi::MemDestroy wrong_cookie{b.handle, 0, a.obj_addr};  // the destroyed buffer's cookie
  EXPECT_EQ(k.mem_destroy(wrong_cookie), EINVAL);
  // Streaming through a full window: 200 cycles of create/destroy never hit the wall.
  fill(k, 64 * kMiB, 0);
  uapi::MemDestroy db{b.handle, 0, b.obj_addr};
  ASSERT_EQ(k.mem_destroy(db), 0);
  for (int i = 0; i < 200; ++i) {
    auto c = create_req(64 * kMiB, 0);
    ASSERT_EQ(k.mem_create(c), 0) << "cycle " << i;
    uapi::MemDestroy dc{c.handle, 0, c.obj_addr};
    ASSERT_EQ(k.mem_destroy(dc), 0);
  }
  EXPECT_EQ(k.stats().destroys, 202u);
}

TEST(SimKernel, BuffersLeakUntilClose) {
  SimKernel k;
  std::vector<uapi::MemCreate> made;
  for (uint64_t size : {64 * kMiB, uint64_t(4096), 3 * kMiB}) {
    made.push_back(create_req(size, 2));
    ASSERT_EQ(k.mem_create(made.back()), 0);
  }
  uapi::MemDestroy d{made[1].handle, 0, made[1].obj_addr};
  ASSERT_EQ(k.mem_destroy(d), 0);
  SimStats s = k.stats();
  EXPECT_EQ(s.live_buffers, 2u);
  EXPECT_EQ(s.domains[2].mapped_bytes, 67 * kMiB);
  EXPECT_EQ(s.domains[2].peak_mapped_bytes, 67 * kMiB + 4096);
  EXPECT_EQ(s.domains[2].iova_used_bytes, 67 * kMiB);
  const SimLeakReport leaked = k.close();
  EXPECT_EQ(leaked.buffers, 2u);
  EXPECT_EQ(leaked.bytes, 67 * kMiB);
  s = k.stats();
  EXPECT_EQ(s.live_buffers, 0u);
  EXPECT_EQ(s.total_mapped_bytes, 0u);
  EXPECT_EQ(s.domains[2].iova_used_bytes, 0u);
  EXPECT_EQ(s.destroys, 1u);  // close is not a destroy
  auto c = create_req(4096, 0);
  EXPECT_EQ(k.mem_create(c), EBADF);
  uapi::Action a{uapi::kActGetDrvVersion, 0};
  EXPECT_EQ(k.action(a), EBADF);
  EXPECT_EQ(k.close().buffers, 0u);
}

TEST(SimKernel, DomainSwitchesAreCounted) {
  SimKernel k;
  auto c0 = create_req(4096, 0);
  ASSERT_EQ(k.mem_create(c0), 0);
  EXPECT_EQ(k.stats().domain_switches, 0u);
  auto c1 = create_req(4096, 1);
  ASSERT_EQ(k.mem_create(c1), 0);
  auto c1b = create_req(4096, 1);
  ASSERT_EQ(k.mem_create(c1b), 0);
  EXPECT_EQ(k.stats().domain_switches, 1u);
  EXPECT_EQ(k.stats().active_domain, 1u);
  auto c0b = create_req(4096, 0);
  ASSERT_EQ(k.mem_create(c0b), 0);
  uapi::Action set{uapi::kActSetIommuDomainId, 5};
  ASSERT_EQ(k.action(set), 0);
  uapi::Action get{uapi::kActGetIommuDomainId, 0};
  ASSERT_EQ(k.action(get), 0);
  EXPECT_EQ(get.value, 5u);
  EXPECT_EQ(k.stats().domain_switches, 3u);
  EXPECT_TRUE(k.stats().domains[5].created);
  uapi::Action bad{uapi::kActSetIommuDomainId, 16};
  EXPECT_EQ(k.action(bad), EINVAL);
  EXPECT_EQ(k.stats().domain_switches, 3u);
  SimKernel one(SimOptions{4 * kGiB, 1, 3});
  uapi::Action set1{uapi::kActSetIommuDomainId, 1};
  EXPECT_EQ(one.action(set1), EINVAL);
  uapi::Action set0{uapi::kActSetIommuDomainId, 0};
  EXPECT_EQ(one.action(set0), 0);
}

TEST(SimKernel, Actions) {
  SimKernel k;
  uapi::Action v{uapi::kActGetDrvVersion, 0};
  ASSERT_EQ(k.action(v), 0);
  EXPECT_EQ(v.value, 908u);
  uapi::Action sram{uapi::kActGetTotalSramSize, 123};
  ASSERT_EQ(k.action(sram), 0);
  EXPECT_EQ(sram.value, 0u);
  uapi::Action free_sram{uapi::kActGetFreeSramSize, 123};
  ASSERT_EQ(k.action(free_sram), 0);
  EXPECT_EQ(free_sram.value, 0u);
  uapi::Action hw{uapi::kActGetHwVersion, 0};
  EXPECT_EQ(k.action(hw), 0);
  uapi::Action reset{uapi::kActReset, 0};
  EXPECT_EQ(k.action(reset), 0);
  uapi::Action unknown{99, 0};
  EXPECT_EQ(k.action(unknown), EINVAL);
}

TEST(SimKernel, SyncValidatesBoundsAndCounts) {
  SimKernel k;
  auto c = create_req(8192, 0, uapi::kMemIommu | uapi::kMemCacheable);
  ASSERT_EQ(k.mem_create(c), 0);
  uapi::MemSync ok{uapi::kSyncToDevice, 0, c.obj_addr, 0, 8192};
  EXPECT_EQ(k.mem_sync(ok), 0);
  uapi::MemSync tail{uapi::kSyncFromDevice, 0, c.obj_addr, 4096, 4096};
  EXPECT_EQ(k.mem_sync(tail), 0);
  uapi::MemSync both{uapi::kSyncToDevice | uapi::kSyncFromDevice, 0, c.obj_addr, 8192, 0};
  EXPECT_EQ(k.mem_sync(both), 0);
  uapi::MemSync past{uapi::kSyncToDevice, 0, c.obj_addr, 4096, 4097};
  EXPECT_EQ(k.mem_sync(past), EINVAL);
  uapi::MemSync past_offset{uapi::kSyncToDevice, 0, c.obj_addr, 8193, 0};
  EXPECT_EQ(k.mem_sync(past_offset), EINVAL);
  uapi::MemSync wrap{uapi::kSyncToDevice, 0, c.obj_addr, 4096, UINT64_MAX};
  EXPECT_EQ(k.mem_sync(wrap), EINVAL);
  uapi::MemSync bad_obj{uapi::kSyncToDevice, 0, c.obj_addr + 8, 0, 16};
  EXPECT_EQ(k.mem_sync(bad_obj), EINVAL);
  uapi::MemSync no_flags{0, 0, c.obj_addr, 0, 16};
  EXPECT_EQ(k.mem_sync(no_flags), EINVAL);
  uapi::MemSync bad_flags{4, 0, c.obj_addr, 0, 16};
  EXPECT_EQ(k.mem_sync(bad_flags), EINVAL);
  EXPECT_EQ(k.stats().syncs, 3u);
}

TEST(SimKernel, BadOptionsThrow) {
  EXPECT_THROW(SimKernel(SimOptions{4096 * 16, 16, 3}), Error);  // below 1 MiB
  EXPECT_THROW(SimKernel(SimOptions{8 * kGiB, 16, 3}), Error);
  EXPECT_THROW(SimKernel(SimOptions{4 * kGiB + 4096, 16, 3}), Error);
  EXPECT_THROW(SimKernel(SimOptions{4 * kGiB, 0, 3}), Error);
  EXPECT_THROW(SimKernel(SimOptions{4 * kGiB, 17, 3}), Error);
  EXPECT_THROW(SimKernel(SimOptions{4 * kGiB, 16, 0}), Error);
  EXPECT_THROW(SimKernel(SimOptions{4 * kGiB, 16, 4}), Error);
}

// ---- submit ------------------------------------------------------------------------------------------

// A kernel with a task buffer of `n` tasks in domain 0; each task's regcmd_addr is set by the test.
struct SubmitFixture {
  explicit SubmitFixture(SimOptions o = {}, uint32_t n = 4, uint32_t flags = uapi::kMemIommu | uapi::kMemKernelMapping)
      : k(o) {
    tasks_req = create_req(n * sizeof(uapi::Task), 0, flags);
    if (k.mem_create(tasks_req) != 0) throw Error("task buffer");
    uapi::MemMap m{tasks_req.handle, 0, 0};
    if (k.mem_map(m) != 0) throw Error("map");
    tasks = static_cast<uapi::Task*>(k.mmap(m.offset, tasks_req.size));
    for (uint32_t i = 0; i < n; ++i) {
      tasks[i] = uapi::Task{};
      tasks[i].enable_mask = 0xd;
      tasks[i].int_mask = 0x300;
      tasks[i].int_clear = 0x1ffff;
      tasks[i].regcfg_amount = 104;
      tasks[i].regcmd_addr = 0x10000 * (i + 1);  // unmapped everywhere unless a test maps it
    }
  }
  uapi::Submit job(uint32_t domain, uint32_t mask, uint32_t start = 0, uint32_t count = 1) const {
    uapi::Submit s{};
    s.flags = uapi::kJobPc;
    s.timeout = 6000;
    s.task_start = start;
    s.task_number = count;
    s.task_obj_addr = tasks_req.obj_addr;
    s.iommu_domain_id = domain;
    s.core_mask = mask;
    for (auto& sub : s.subcore_task) sub = {start, count};
    return s;
  }
  SimKernel k;
  uapi::MemCreate tasks_req{};
  uapi::Task* tasks = nullptr;
};

TEST(SimKernelSubmit, ValidationErrors) {
  SubmitFixture f;
  auto s = f.job(0, 1);
  s.task_number = 0;
  EXPECT_EQ(f.k.submit(s), EINVAL);
  s = f.job(0, 8);
  EXPECT_EQ(f.k.submit(s), EINVAL);
  for (uint32_t mask : {5u, 6u}) {
    s = f.job(0, mask);
    EXPECT_EQ(f.k.submit(s), EINVAL) << "mask " << mask;
  }
  s = f.job(0, 1);
  s.flags = uapi::kJobNonblock;  // no PC flag
  EXPECT_EQ(f.k.submit(s), EINVAL);
  s = f.job(0, 1);
  s.task_obj_addr = 0x1234;
  EXPECT_EQ(f.k.submit(s), EINVAL);
  s = f.job(0, 1);
  s.task_obj_addr = f.tasks_req.obj_addr + 0x200;  // a cookie of no buffer
  EXPECT_EQ(f.k.submit(s), EINVAL);
  s = f.job(0, 1, 0, 5);  // 5 tasks in a 4-task buffer... page-rounded: 4096 bytes hold 102
  EXPECT_NE(f.k.submit(s), EINVAL);
  s = f.job(0, 1, 100, 3);  // (100 + 3) * 40 > 4096
  EXPECT_EQ(f.k.submit(s), EINVAL);
  s = f.job(0, 1, UINT32_MAX, 2);
  EXPECT_EQ(f.k.submit(s), EINVAL);
  s = f.job(16, 1);
  EXPECT_EQ(f.k.submit(s), EINVAL);
  s = f.job(0, 1);
  s.subcore_task[0] = {0, 0};  // core 0 given nothing to run
  EXPECT_EQ(f.k.submit(s), EINVAL);
  s = f.job(0, 7);
  s.subcore_task[4] = {200, 1};  // core 2's range is outside the buffer
  EXPECT_EQ(f.k.submit(s), EINVAL);
  const SimStats st = f.k.stats();
  EXPECT_EQ(st.submits, 0u);
  EXPECT_EQ(st.domain_switches, 0u);  // validation happens before any switch
}

TEST(SimKernelSubmit, TaskBufferNeedsKernelMapping) {
  SubmitFixture f({}, 4, uapi::kMemIommu);
  auto s = f.job(0, 1);
  EXPECT_EQ(f.k.submit(s), EINVAL);
}

TEST(SimKernelSubmit, MaskNamingAMissingCoreIsInvalid) {
  SubmitFixture f(SimOptions{4 * kGiB, 16, 1});
  auto s = f.job(0, 2);
  EXPECT_EQ(f.k.submit(s), EINVAL);
  s = f.job(0, 3);
  EXPECT_EQ(f.k.submit(s), EINVAL);
  s = f.job(0, 0);  // AUTO runs on core 0
  EXPECT_EQ(f.k.submit(s), EFAULT);
}

TEST(SimKernelSubmit, FaultOnAddressMappedOnlyInAnotherDomain) {
  SubmitFixture f;
  // Domain 1: a first page (same address as the task buffer in domain 0), then the target below it.
  auto first = create_req(4096, 1);
  ASSERT_EQ(f.k.mem_create(first), 0);
  auto target = create_req(4096, 1);
  ASSERT_EQ(f.k.mem_create(target), 0);
  ASSERT_NE(target.dma_addr, f.tasks_req.dma_addr);
  f.tasks[0].regcmd_addr = target.dma_addr;
  const uint64_t switches = f.k.stats().domain_switches;
  auto s = f.job(0, 1);
  EXPECT_EQ(f.k.submit(s), EFAULT);
  const SimStats st = f.k.stats();
  EXPECT_EQ(st.faults, 1u);
  EXPECT_EQ(st.submits, 0u);
  EXPECT_EQ(st.active_domain, 0u);
  EXPECT_EQ(st.domain_switches, switches + 1);  // the submit switched back to domain 0
  const std::string text = f.k.describe_last_fault();
  char addr[32];
  std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(target.dma_addr));
  EXPECT_NE(text.find(std::string("task touched unmapped address ") + addr + " in domain 0"), std::string::npos)
      << text;
  EXPECT_NE(text.find("mapped in domain 1"), std::string::npos) << text;
}

TEST(SimKernelSubmit, FaultSwitchesToTheSubmitsDomain) {
  SubmitFixture f;
  auto s = f.job(2, 1);
  EXPECT_EQ(f.k.submit(s), EFAULT);
  EXPECT_EQ(f.k.stats().active_domain, 2u);
  EXPECT_EQ(f.k.stats().domain_switches, 1u);
  EXPECT_NE(f.k.describe_last_fault().find("in domain 2"), std::string::npos);
}

// Which subcore_task entry each core runs: seen through the address of the task that faults first.
std::string first_fault(SubmitFixture& f, uint32_t mask, uint32_t entry, uint32_t task) {
  auto s = f.job(0, mask, 0, 4);
  for (auto& sub : s.subcore_task) sub = {3, 1};
  s.subcore_task[entry] = {task, 1};
  EXPECT_EQ(f.k.submit(s), EFAULT);
  return f.k.describe_last_fault();
}

TEST(SimKernelSubmit, CoresRunTheirSubcoreRanges) {
  SubmitFixture f;
  // Task i's commands are at the unmapped address 0x10000 * (i + 1).
  EXPECT_NE(first_fault(f, 7, 2, 1).find("0x20000 in domain 0"), std::string::npos);  // 3 cores: core 0 ← [2]
  EXPECT_NE(first_fault(f, 3, 0, 2).find("0x30000"), std::string::npos);            // 2 cores: core 0 ← [0]
  EXPECT_NE(first_fault(f, 1, 0, 0).find("0x10000"), std::string::npos);
  EXPECT_NE(first_fault(f, 0, 0, 2).find("0x30000"), std::string::npos);            // AUTO → core 0 ← [0]
  const std::string core2 = first_fault(f, 4, 2, 1);                                  // core 2 alone ← [2]
  EXPECT_NE(core2.find("0x20000"), std::string::npos);
  EXPECT_NE(core2.find("core 2"), std::string::npos);
  const std::string core1 = first_fault(f, 2, 1, 2);                                  // core 1 alone ← [1]
  EXPECT_NE(core1.find("0x30000"), std::string::npos);
  EXPECT_EQ(f.k.stats().faults, 6u);
}

}  // namespace
}  // namespace ork::npu::sim

namespace ork::npu::sim {
namespace {

TEST(SimKernelDriver, MemSyncNeedsCacheableAndImportsAreNot) {
  SimKernel k;
  auto plain = create_req(4096, 0);  // no CACHEABLE
  ASSERT_EQ(k.mem_create(plain), 0);
  uapi::MemSync s{uapi::kSyncToDevice, 0, plain.obj_addr, 0, 4096};
  EXPECT_EQ(k.mem_sync(s), EINVAL);  // rknpu_gem_sync_ioctl
  const int fd = ::memfd_create("ork-test", 0);
  ASSERT_EQ(::ftruncate(fd, 8192), 0);
  auto imp = create_req(8192, 0, uapi::kMemIommu | uapi::kMemCacheable);
  ASSERT_EQ(k.import_fd(fd, imp), 0);
  uapi::MemSync si{uapi::kSyncToDevice, 0, imp.obj_addr, 0, 8192};
  EXPECT_EQ(k.mem_sync(si), EINVAL);  // an import is never CACHEABLE
  EXPECT_EQ(k.sync_dmabuf(imp.handle, uapi::kSyncToDevice), 0);
  EXPECT_EQ(k.sync_dmabuf(plain.handle, uapi::kSyncToDevice), EINVAL);  // not an import
  EXPECT_EQ(k.stats().syncs, 1u);
  ::close(fd);
}

TEST(SimKernelDriver, SyncAndDestroySwitchToTheBuffersDomain) {
  SimKernel k;
  auto b0 = create_req(4096, 0, uapi::kMemIommu | uapi::kMemCacheable);
  ASSERT_EQ(k.mem_create(b0), 0);
  auto b2 = create_req(4096, 2, uapi::kMemIommu | uapi::kMemCacheable);
  ASSERT_EQ(k.mem_create(b2), 0);  // switch 1: to domain 2
  uapi::MemSync s{uapi::kSyncToDevice, 0, b0.obj_addr, 0, 4096};
  ASSERT_EQ(k.mem_sync(s), 0);  // switch 2: back to 0
  EXPECT_EQ(k.stats().active_domain, 0u);
  uapi::MemDestroy d{b2.handle, 0, b2.obj_addr};
  ASSERT_EQ(k.mem_destroy(d), 0);  // switch 3: to 2
  EXPECT_EQ(k.stats().active_domain, 2u);
  EXPECT_EQ(k.stats().domain_switches, 3u);
}

TEST(SimKernelDriver, AutoMaskRunsOnTheSchedulersCoreAndReportsIt) {
  SubmitFixture f;
  auto s = f.job(0, 0);
  for (auto& sub : s.subcore_task) sub = {3, 1};
  s.subcore_task[0] = {1, 1};  // the least-loaded (idle) core 0 reads subcore_task[0]
  EXPECT_EQ(f.k.submit(s), EFAULT);
  EXPECT_NE(f.k.describe_last_fault().find("0x20000"), std::string::npos) << f.k.describe_last_fault();
  EXPECT_NE(f.k.describe_last_fault().find("core 0"), std::string::npos);
  EXPECT_EQ(s.core_mask, 1u);  // the driver writes the chosen core's mask into the job's args
}

TEST(SimKernelDriver, JobsThatWouldNotFinishTimeOut) {
  SubmitFixture f;
  // A regcmd buffer of zeros: the PC fetches no-ops and never reaches OPERATION_ENABLE.
  auto r = create_req(4096, 0);
  ASSERT_EQ(f.k.mem_create(r), 0);
  f.tasks[0].regcmd_addr = r.dma_addr;
  auto s = f.job(0, 1);
  EXPECT_EQ(f.k.submit(s), ETIMEDOUT);
  EXPECT_EQ(f.k.stats().timeouts, 1u);
  EXPECT_NE(f.k.describe_last_fault().find("short fetch"), std::string::npos) << f.k.describe_last_fault();
}

}  // namespace
}  // namespace ork::npu::sim
