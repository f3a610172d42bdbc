// The default context (the trained length bounded by memory) and the refusal of one that does not fit.
#include "runtime/context_size.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace ork::runtime {
namespace {

model::Config config(int64_t n_ctx_train) {
  model::Config c;
  c.n_layer = 16;
  c.n_head = 32;
  c.n_head_kv = 8;
  c.head_dim = 64;
  c.n_ctx_train = n_ctx_train;
  return c;  // 2 × 16 × 512 × 4 = 65536 bytes of KV per token
}

TEST(ContextSize, KvBytes) { EXPECT_EQ(kv_cache_bytes(config(1), 1000), 65536000u); }

TEST(ContextSize, DefaultIsTheTrainedLengthWhenItFits) {
  const uint64_t gib = uint64_t(1) << 30;
  EXPECT_EQ(resolve_context(config(131072), 0, 24 * gib), 131072);  // 8 GiB of KV, 12 GiB budget
  EXPECT_EQ(resolve_context(config(2048), 0, gib), 2048);
}

TEST(ContextSize, DefaultShrinksToWhatFitsInMultiplesOf256) {
  const uint64_t gib = uint64_t(1) << 30;
  // 4 GiB available: a 2 GiB budget holds 32768 tokens exactly.
  EXPECT_EQ(resolve_context(config(131072), 0, 4 * gib), 32768);
  // 3 GiB: 1.5 GiB / 64 KiB = 24576.
  EXPECT_EQ(resolve_context(config(131072), 0, 3 * gib), 24576);
  // Not even 256 tokens (16 MiB of KV): one error with the numbers.
  try {
    resolve_context(config(131072), 0, 20u << 20);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("65536 bytes of f32 KV cache per token"), std::string::npos) << e.what();
  }
}

TEST(ContextSize, ARequestThatDoesNotFitIsRefusedWithTheNumbers) {
  const uint64_t gib = uint64_t(1) << 30;
  EXPECT_EQ(resolve_context(config(4096), 16384, 4 * gib), 16384);  // beyond the trained length: allowed
  try {
    resolve_context(config(4096), 65536, 4 * gib);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    for (const char* needle : {"65536 tokens", "4096 MiB of f32 KV cache", "2048 MiB budget", "4096 MiB available",
                               "at most 32768 tokens fit"}) {
      EXPECT_NE(m.find(needle), std::string::npos) << needle << " in: " << m;
    }
  }
  EXPECT_THROW(resolve_context(config(4096), -1, 4 * gib), Error);
  EXPECT_THROW(resolve_context(config(4096), (int64_t(1) << 24) + 1, 4 * gib), Error);
}

// f16 and q8_0 caches: the type's bytes per token plus one layer's f32 staging (2 × 512 × 4 = 4096).
TEST(ContextSize, KvTypesCountTheirBytesAndTheStaging) {
  using model::KvType;
  EXPECT_EQ(kv_cache_bytes(config(1), 1000, KvType::kF16), 32768000u);
  EXPECT_EQ(kv_cache_bytes(config(1), 1000, KvType::kQ8_0), 1000u * 2 * 16 * 544);
  EXPECT_EQ(kv_staging_bytes(config(1), 1000, KvType::kF32), 0u);
  EXPECT_EQ(kv_staging_bytes(config(1), 1000, KvType::kF16), 4096000u);
  const uint64_t gib = uint64_t(1) << 30;
  // 2 GiB budget: 2^31 / (32768 + 4096) = 58254 tokens → 58112; q8_0: 2^31 / (17408 + 4096) → 99840.
  EXPECT_EQ(resolve_context(config(131072), 0, 4 * gib, KvType::kF16), 58112);
  EXPECT_EQ(resolve_context(config(131072), 0, 4 * gib, KvType::kQ8_0), 99840);
  EXPECT_EQ(resolve_context(config(4096), 58254, 4 * gib, KvType::kF16), 58254);
  try {
    resolve_context(config(4096), 58255, 4 * gib, KvType::kF16);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    for (const char* needle : {"58255 tokens", "of f16 KV cache", "36864 bytes per token", "at most 58254 tokens fit"}) {
      EXPECT_NE(m.find(needle), std::string::npos) << needle << " in: " << m;
    }
  }
}

TEST(ContextSize, UnknownMemoryKeepsTheOldDefault) {
  EXPECT_EQ(resolve_context(config(131072), 0, 0), 4096);
  EXPECT_EQ(resolve_context(config(131072), 100000, 0), 100000);
}

TEST(ContextSize, AvailableMemoryIsRead) { EXPECT_GT(available_memory_bytes(), 0u); }

}  // namespace
}  // namespace ork::runtime
