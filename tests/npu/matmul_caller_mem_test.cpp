// The matmul scratch in caller memory (MatmulScratch::place): A, C and the register commands as views
// of an imported memfd, the same results as ork's own scratch, no buffer of ork's but the task array,
// and the memory that cannot hold the need.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "npu/device.h"
#include "npu/matmul.h"

namespace ork::npu {
namespace {

std::vector<int8_t> fill(int64_t count, uint32_t seed) {
  std::vector<int8_t> v(static_cast<size_t>(count));
  for (auto& e : v) {
    seed = seed * 1664525u + 1013904223u;
    e = int8_t(seed >> 24);
  }
  return v;
}

struct Memfd {
  explicit Memfd(uint64_t size) : size(size) {
    fd = ::memfd_create("ork-scratch", 0);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::ftruncate(fd, off_t(size)), 0);
  }
  ~Memfd() { ::close(fd); }
  int fd = -1;
  uint64_t size = 0;
};

TEST(MatmulCallerMemory, SameResultsWithOnlyTheTaskArrayAllocated) {
  constexpr int64_t kM = 16, kK = 256, kN = 96;
  const std::vector<int8_t> a = fill(kM * kK, 1), b = fill(kN * kK, 2);
  auto dev = Device::open_sim({});
  const PackedWeight w = pack_weight(*dev, b.data(), kN, kK, 1);
  std::vector<int32_t> expected(size_t(kM * kN)), got(size_t(kM * kN));
  {
    MatmulScratch own(*dev);
    matmul_i8(*dev, own, w, a.data(), kM, expected.data());
  }
  const ScratchNeed need = scratch_need(kM, kK, kN, Dtype::kI8, dev->caps().cores);
  const uint64_t bytes = MatmulScratch::caller_bytes(need);
  EXPECT_EQ(bytes % 4096, 0u);
  EXPECT_GE(bytes, need.a + need.c + need.regcmd);
  EXPECT_LT(bytes, need.a + need.c + need.regcmd + 3 * 4096);  // each rounded up to a page
  Memfd mem(bytes);
  const Counters before = dev->counters();
  MatmulScratch s(*dev);
  s.place(1, need, dev->import_fd(mem.fd, bytes, 1));
  EXPECT_TRUE(s.in_caller_memory(1));
  EXPECT_FALSE(s.in_caller_memory(0));
  s.reserve(1, need);  // fits: only the task array is allocated
  matmul_i8(*dev, s, w, a.data(), kM, got.data());
  matmul_i8(*dev, s, w, a.data(), kM / 2, got.data());  // smaller calls reuse the views
  matmul_i8(*dev, s, w, a.data(), kM, got.data());
  EXPECT_EQ(got, expected);
  const Counters after = dev->counters();
  EXPECT_EQ(after.imports - before.imports, 1u);
  EXPECT_EQ(after.creates - before.creates, 2u);  // the import and the task array
  const uint64_t tasks = (need.tasks + 4095) / 4096 * 4096;
  EXPECT_EQ(s.capacity(1).tasks, tasks);
  EXPECT_EQ(s.bytes(1), bytes + tasks);
  EXPECT_EQ(after.mapped_bytes[1] - before.mapped_bytes[1], bytes + tasks);
  // The NPU wrote C into the caller's memory: it is not all zero.
  std::vector<uint8_t> seen(bytes);
  ASSERT_EQ(::pread(mem.fd, seen.data(), bytes, 0), ssize_t(bytes));
  EXPECT_NE(std::count(seen.begin(), seen.end(), 0), ptrdiff_t(bytes));
  s.clear();  // drops the import
  EXPECT_EQ(dev->counters().imported_bytes, 0u);
}

TEST(MatmulCallerMemory, MemoryThatCannotHoldTheNeedIsRefused) {
  auto dev = Device::open_sim({});
  const ScratchNeed need = scratch_need(16, 256, 96, Dtype::kI8, dev->caps().cores);
  const uint64_t bytes = MatmulScratch::caller_bytes(need);
  Memfd mem(bytes * 4);
  {  // too small
    MatmulScratch s(*dev);
    EXPECT_THROW(s.place(0, need, dev->import_fd(mem.fd, bytes - 4096, 0)), Error);
  }
  {  // another domain
    MatmulScratch s(*dev);
    EXPECT_THROW(s.place(0, need, dev->import_fd(mem.fd, bytes, 1)), Error);
  }
  {  // a domain that already allocated
    MatmulScratch s(*dev);
    s.reserve(0, need);
    EXPECT_THROW(s.place(0, need, dev->import_fd(mem.fd, bytes, 0)), Error);
  }
  {  // a larger need later: reserve and matmul refuse instead of allocating
    MatmulScratch s(*dev);
    s.place(0, need, dev->import_fd(mem.fd, bytes, 0));
    const ScratchNeed bigger = scratch_need(128, 256, 96, Dtype::kI8, dev->caps().cores);
    try {
      s.reserve(0, bigger);
      FAIL() << "reserve grew caller memory";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("caller memory"), std::string::npos) << e.what();
    }
    const std::vector<int8_t> b = fill(96 * 256, 3), a = fill(128 * 256, 4);
    const PackedWeight w = pack_weight(*dev, b.data(), 96, 256, 0);
    std::vector<int32_t> c(128 * 96);
    const uint64_t creates = dev->counters().creates;
    EXPECT_THROW(matmul_i8(*dev, s, w, a.data(), 128, c.data()), Error);
    EXPECT_EQ(dev->counters().creates, creates);  // nothing allocated for A, C, regcmd
  }
}

}  // namespace
}  // namespace ork::npu
