// KvCache memory: a long context reserves its bytes but is resident only where written; copies are
// deep and equal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

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
  std::vector<float> k(16 * 1024, 1.0f), v(16 * 1024, 2.0f);
  for (int64_t l = 0; l < 4; ++l) cache.store(l, 0, 16, k.data(), v.data());
  EXPECT_LT(resident_bytes() - before, uint64_t(64) << 20) << "the untouched positions became resident";
  EXPECT_EQ(cache.k_f32(3, 15)[0], 1.0f);
  EXPECT_EQ(cache.v_f32(2, 100)[5], 0.0f);
}

TEST(KvCacheMemory, F16AndQ8_0HoldHalfAndAbout0_27OfTheF32Bytes) {
  EXPECT_EQ(KvCache(4, 1000, 256, KvType::kF32).bytes(), 2u * 4 * 1000 * 256 * 4);
  EXPECT_EQ(KvCache(4, 1000, 256, KvType::kF16).bytes(), 2u * 4 * 1000 * 256 * 2);
  EXPECT_EQ(KvCache(4, 1000, 256, KvType::kQ8_0).bytes(), 2u * 4 * 1000 * (256 / 32) * 34);
}

TEST(KvCacheMemory, CopiesAreDeep) {
  auto put = [](KvCache& c, float x) {
    const float k[4] = {0, 0, x, 0}, v[4] = {};
    c.store(1, 3, 1, k, v);
  };
  auto get = [](const KvCache& c) {
    float k[4], v[4];
    c.load(1, 3, 1, k, v);
    return k[2];
  };
  KvCache a(2, 8, 4, KvType::kF16);
  put(a, 5.0f);
  KvCache b = a;
  EXPECT_EQ(get(b), 5.0f);
  put(b, 6.0f);
  EXPECT_EQ(get(a), 5.0f);
  KvCache c(1, 1, 1);
  c = b;
  EXPECT_EQ(c.n_ctx(), 8);
  EXPECT_EQ(c.type(), KvType::kF16);
  EXPECT_EQ(get(c), 6.0f);
  c = c;  // self-assignment keeps the contents
  EXPECT_EQ(get(c), 6.0f);
}

}  // namespace
}  // namespace ork::model
