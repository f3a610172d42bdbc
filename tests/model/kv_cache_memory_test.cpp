// KvCache memory: a long context reserves its bytes but is resident only where written; copies are
// deep and equal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "model/kv_cache.h"

namespace ork::model {
namespace {

uint64_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return got == 2 ? uint64_t(resident) * uint64_t(::sysconf(_SC_PAGESIZE)) : 0;
}

TEST(KvCacheMemory, ALongContextIsResidentOnlyWhereWritten) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizer allocators may touch what they hand out";
#endif
  const uint64_t before = resident_bytes();
  ASSERT_GT(before, 0u);
  KvCache cache(4, 1 << 14, 1024);  // 2 × 256 MiB reserved
  EXPECT_EQ(cache.bytes(), uint64_t(512) << 20);
  for (int64_t l = 0; l < 4; ++l) {
    for (int64_t p = 0; p < 16; ++p) cache.k(l, p)[0] = 1.0f, cache.v(l, p)[0] = 2.0f;
  }
  EXPECT_LT(resident_bytes() - before, uint64_t(64) << 20) << "the untouched positions became resident";
  EXPECT_EQ(cache.k(3, 15)[0], 1.0f);
  EXPECT_EQ(cache.v(2, 100)[5], 0.0f);
}

TEST(KvCacheMemory, CopiesAreDeep) {
  KvCache a(2, 8, 4);
  a.k(1, 3)[2] = 5.0f;
  KvCache b = a;
  EXPECT_EQ(b.k(1, 3)[2], 5.0f);
  b.k(1, 3)[2] = 6.0f;
  EXPECT_EQ(a.k(1, 3)[2], 5.0f);
  KvCache c(1, 1, 1);
  c = b;
  EXPECT_EQ(c.n_ctx(), 8);
  EXPECT_EQ(c.k(1, 3)[2], 6.0f);
  c = c;  // self-assignment keeps the contents
  EXPECT_EQ(c.k(1, 3)[2], 6.0f);
}

}  // namespace
}  // namespace ork::model
