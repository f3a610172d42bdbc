// HugePageArena: 64-byte-aligned slices front to back inside a 2 MiB-aligned mapping, a clear error
// past its capacity, and the MADV_HUGEPAGE advice where the kernel has transparent huge pages.
#include "core/huge_page_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"

namespace ork {
namespace {

TEST(HugePageArena, TakesAlignedSlicesFrontToBack) {
  HugePageArena arena(5000);
  EXPECT_EQ(arena.capacity(), HugePageArena::kHugePageBytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena.data()) % HugePageArena::kHugePageBytes, 0u);
  uint8_t* a = arena.take(10);
  uint8_t* b = arena.take(100);
  uint8_t* c = arena.take(64);
  EXPECT_EQ(a, arena.data());
  EXPECT_EQ(b, a + 64);
  EXPECT_EQ(c, b + 128);
  EXPECT_EQ(arena.used(), size_t(64 + 128 + 64));
  EXPECT_EQ(a[0] | b[99] | c[63], 0);  // anonymous memory: zero until written
  std::memset(a, 1, 10);
  std::memset(b, 2, 100);
  std::memset(c, 3, 64);
  EXPECT_EQ(a[9], 1);
  EXPECT_EQ(b[0], 2);
  EXPECT_EQ(b[99], 2);
  EXPECT_EQ(c[0], 3);
  // The last byte of the capacity is the arena's too.
  const size_t left = arena.capacity() - arena.used();
  uint8_t* rest = arena.take(left);
  EXPECT_EQ(rest + left, arena.data() + arena.capacity());
  rest[left - 1] = 9;
  EXPECT_EQ(arena.used(), arena.capacity());
}

TEST(HugePageArena, RoundsCapacityToWholeHugePages) {
  EXPECT_EQ(HugePageArena(1).capacity(), HugePageArena::kHugePageBytes);
  EXPECT_EQ(HugePageArena(HugePageArena::kHugePageBytes).capacity(), HugePageArena::kHugePageBytes);
  EXPECT_EQ(HugePageArena(HugePageArena::kHugePageBytes + 1).capacity(), 2 * HugePageArena::kHugePageBytes);
  HugePageArena empty(0);
  EXPECT_EQ(empty.capacity(), 0u);
  EXPECT_EQ(empty.take(0), empty.data());
}

TEST(HugePageArena, RefusesASlicePastItsCapacity) {
  HugePageArena arena(1);
  arena.take(100);
  try {
    arena.take(arena.capacity());
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("HugePageArena"), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(arena.capacity()) + " bytes asked"), std::string::npos) << what;
  }
  EXPECT_EQ(arena.used(), 100u);  // the refused slice took nothing
  EXPECT_NO_THROW(arena.take(arena.capacity() - 128));
  EXPECT_THROW(arena.take(1), Error);
  EXPECT_THROW(HugePageArena(0).take(1), Error);
}

#if defined(__SANITIZE_ADDRESS__)
TEST(HugePageArenaDeathTest, UnderAsanAReadPastTheSlicesIsReported) {
  HugePageArena arena(1);
  uint8_t* p = arena.take(100);
  EXPECT_EQ(p[99], 0);
  EXPECT_DEATH(
      {
        volatile uint8_t v = p[100];
        (void)v;
      },
      "use-after-poison");
}
#endif

// The kernel's transparent huge page mode ("always [madvise] never": the bracketed one), or "".
std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(f, line)) return "";
  const size_t open = line.find('['), close = line.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

// The THPeligible field of the /proc/self/smaps entry holding address p, or -1.
int thp_eligible(const void* p) {
  std::ifstream f("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  while (std::getline(f, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= a && a < hi;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::stoi(line.substr(12));
    }
  }
  return -1;
}

// Whether this binary runs under a user-mode emulator (qemu-aarch64 on an x86-64 kernel, as the
// aarch64 tests do): the kernel's architecture is not the one the binary was built for. Such an
// emulator accepts madvise without passing it on and writes its own smaps.
bool emulated() {
  std::ifstream f("/proc/sys/kernel/arch");
  std::string kernel_arch;
  if (!(f >> kernel_arch)) return false;
#if defined(__x86_64__)
  return kernel_arch != "x86_64";
#elif defined(__aarch64__)
  return kernel_arch != "aarch64";
#else
  return false;
#endif
}

TEST(HugePageArena, IsAdvisedForHugePagesWhereTheKernelHasThem) {
  const std::string mode = thp_mode();
  if (mode != "madvise" && mode != "always") GTEST_SKIP() << "transparent huge pages: '" << mode << "'";
  HugePageArena arena(3 * HugePageArena::kHugePageBytes);
  EXPECT_TRUE(arena.advised());
  if (emulated()) GTEST_SKIP() << "under an emulator: the kernel never sees the advice";
  const int eligible = thp_eligible(arena.data());
  if (eligible < 0) GTEST_SKIP() << "no THPeligible field in /proc/self/smaps";
  EXPECT_EQ(eligible, 1);
}

TEST(HugePageArena, OrkHugePagesZeroAsksForNone) {
  ::setenv("ORK_HUGE_PAGES", "0", 1);
  HugePageArena off(1);
  ::unsetenv("ORK_HUGE_PAGES");
  EXPECT_FALSE(off.advised());
  EXPECT_NE(off.take(64), nullptr);  // ordinary memory, still an arena
  if (thp_mode() == "madvise" || thp_mode() == "always") {
    EXPECT_TRUE(HugePageArena(1).advised());
    if (!emulated() && thp_eligible(off.data()) >= 0) {
      EXPECT_EQ(thp_eligible(off.data()), thp_mode() == "always" ? 1 : 0);
    }
  }
  ::setenv("ORK_HUGE_PAGES", "maybe", 1);
  EXPECT_THROW(HugePageArena(1), Error);  // a malformed value names the variable (core/env.h)
  ::unsetenv("ORK_HUGE_PAGES");
}

}  // namespace
}  // namespace ork
