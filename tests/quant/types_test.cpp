#include "quant/types.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "core/error.h"
#include "quant/decode.h"

namespace ork::quant {
namespace {

using ::testing::HasSubstr;

struct Expected {
  uint32_t id;
  const char* name;
  int64_t block_size;
  int64_t type_size;
};

// Sizes from ggml-common.h (block structs) and ggml.c's type traits.
const Expected kExpected[] = {
    {0, "f32", 1, 4},        {1, "f16", 1, 2},        {2, "q4_0", 32, 18},     {3, "q4_1", 32, 20},
    {6, "q5_0", 32, 22},     {7, "q5_1", 32, 24},     {8, "q8_0", 32, 34},     {9, "q8_1", 32, 36},
    {10, "q2_K", 256, 84},   {11, "q3_K", 256, 110},  {12, "q4_K", 256, 144},  {13, "q5_K", 256, 176},
    {14, "q6_K", 256, 210},  {15, "q8_K", 256, 292},  {20, "iq4_nl", 32, 18},  {23, "iq4_xs", 256, 136},
    {30, "bf16", 1, 2},
};

TEST(QuantTypes, TraitsOfEverySupportedType) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    ASSERT_TRUE(is_supported(e.id));
    const TypeTraits& t = traits(Type(e.id));
    EXPECT_EQ(uint32_t(t.type), e.id);
    EXPECT_EQ(t.name, e.name);
    EXPECT_EQ(type_name(e.id), e.name);
    EXPECT_EQ(t.block_size, e.block_size);
    EXPECT_EQ(t.type_size, e.type_size);
    EXPECT_NE(t.decode, nullptr);
    EXPECT_NE(t.quantize, nullptr);
  }
}

TEST(QuantTypes, IsSupportedForEveryIdUpTo40) {
  std::set<uint32_t> supported;
  for (const Expected& e : kExpected) supported.insert(e.id);
  for (uint32_t id = 0; id <= 40; ++id) {
    EXPECT_EQ(is_supported(id), supported.count(id) == 1) << "id " << id;
  }
  EXPECT_FALSE(is_supported(1000));
  EXPECT_FALSE(is_supported(0xffffffffu));
}

TEST(QuantTypes, NamesOfUnsupportedIds) {
  EXPECT_EQ(type_name(16), "iq2_xxs");
  EXPECT_EQ(type_name(21), "iq3_s");
  EXPECT_EQ(type_name(39), "mxfp4");
  EXPECT_EQ(type_name(5), "q4_3");
  EXPECT_EQ(type_name(40), "type 40");
  EXPECT_EQ(type_name(42), "type 42");
  EXPECT_EQ(type_name(70000), "type 70000");
  EXPECT_EQ(type_name(70000).data(), type_name(70000).data());  // stable storage
}

TEST(QuantTypes, TraitsOfUnsupportedTypeThrowsNamingIt) {
  try {
    traits(Type(16));
    FAIL() << "expected ork::Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("iq2_xxs"));
    EXPECT_THAT(e.what(), HasSubstr("16"));
  }
  EXPECT_THROW(traits(Type(4)), Error);
  EXPECT_THROW(row_bytes(Type(42), 32), Error);
}

TEST(QuantTypes, RowBytes) {
  EXPECT_EQ(row_bytes(Type::F32, 7), 28);
  EXPECT_EQ(row_bytes(Type::F16, 7), 14);
  EXPECT_EQ(row_bytes(Type::BF16, 3), 6);
  EXPECT_EQ(row_bytes(Type::Q4_0, 64), 36);
  EXPECT_EQ(row_bytes(Type::Q4_1, 96), 60);
  EXPECT_EQ(row_bytes(Type::Q5_0, 32), 22);
  EXPECT_EQ(row_bytes(Type::Q5_1, 32), 24);
  EXPECT_EQ(row_bytes(Type::Q8_0, 4096), 128 * 34);
  EXPECT_EQ(row_bytes(Type::Q8_1, 32), 36);
  EXPECT_EQ(row_bytes(Type::Q2_K, 512), 168);
  EXPECT_EQ(row_bytes(Type::Q3_K, 256), 110);
  EXPECT_EQ(row_bytes(Type::Q4_K, 4096), 16 * 144);
  EXPECT_EQ(row_bytes(Type::Q5_K, 256), 176);
  EXPECT_EQ(row_bytes(Type::Q6_K, 768), 630);
  EXPECT_EQ(row_bytes(Type::Q8_K, 256), 292);
  EXPECT_EQ(row_bytes(Type::Q4_K, 0), 0);
  EXPECT_EQ(block_count(Type::Q6_K, 1024), 4);
}

TEST(QuantTypes, RowBytesRejectsPartialBlocks) {
  try {
    row_bytes(Type::Q4_K, 100);
    FAIL() << "expected ork::Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("q4_K"));
    EXPECT_THAT(e.what(), HasSubstr("100"));
    EXPECT_THAT(e.what(), HasSubstr("256"));
  }
  EXPECT_THROW(row_bytes(Type::Q8_0, 33), Error);
  EXPECT_THROW(row_bytes(Type::Q8_0, -32), Error);
  EXPECT_THROW(block_count(Type::F16, -1), Error);
  EXPECT_THROW(row_bytes(Type::Q8_0, (INT64_MAX / 32) * 32), Error);  // byte count overflows
}

TEST(QuantTypes, DecodeRowRejectsBadLengthNamingTheType) {
  std::vector<uint8_t> bytes(1024, 0);
  std::vector<float> out(1024);
  for (const Expected& e : kExpected) {
    if (e.block_size == 1) continue;
    SCOPED_TRACE(e.name);
    try {
      decode_row(Type(e.id), bytes.data(), out.data(), e.block_size + 1);
      FAIL() << "expected ork::Error";
    } catch (const Error& err) {
      EXPECT_THAT(err.what(), HasSubstr(e.name));
    }
    // The per-type decoders and quantizers check too.
    EXPECT_THROW(traits(Type(e.id)).decode(bytes.data(), out.data(), e.block_size - 1), Error);
    EXPECT_THROW(traits(Type(e.id)).quantize(out.data(), bytes.data(), e.block_size / 2), Error);
  }
  EXPECT_THROW(decode_row(Type(17), bytes.data(), out.data(), 256), Error);
}

}  // namespace
}  // namespace ork::quant
