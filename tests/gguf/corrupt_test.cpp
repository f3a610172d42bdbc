// The reader against hostile files: truncations, byte flips and specific malformed fields.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "gguf/file.h"
#include "gguf/test_util.h"
#include "gguf/writer.h"

namespace ork::gguf {
namespace {

using testing::Bytes;
using testing::TempDir;

// A small valid file whose last tensor ends exactly at the end of the file (so that every proper
// prefix is invalid).
std::vector<uint8_t> small_valid_file() {
  Writer w;
  w.add_string("general.architecture", "llama");
  w.add_uint32("llama.block_count", 2);
  w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_string_array("tokenizer.ggml.tokens", {"a", "b", "ab"});
  w.add_int32_array("tokenizer.ggml.token_type", {1, 1, 1});
  w.add_bool("tokenizer.ggml.add_bos_token", true);
  const std::vector<float> a(6, 0.5f), b(16, -1.0f);
  w.add_tensor("a", quant::Type::F32, {3, 2}, a.data(), a.size() * 4);
  w.add_tensor("blk.0.attn_q.weight", quant::Type::F32, {4, 4}, b.data(), b.size() * 4);
  return w.to_bytes();
}

// Opens `bytes` as a file; returns the error message, or "" when it parsed. Any exception other
// than ork::Error fails the test. A parsed file's tensor data is read end to end (for ASan).
std::string try_open(const TempDir& dir, const std::vector<uint8_t>& bytes, size_t n) {
  const std::string path = dir.file("c.gguf");
  testing::write_bytes(path, bytes, n);
  try {
    const File f = File::open(path);
    unsigned sum = 0;
    for (const TensorInfo& t : f.tensors()) {
      for (uint64_t i = 0; i < t.n_bytes; ++i) sum += t.data[i];
    }
    volatile unsigned sink = sum;
    (void)sink;
    return "";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path, 0), 0u) << "message does not start with the path: " << msg;
    return msg.empty() ? "?" : msg;
  }
}

TEST(GgufCorrupt, TruncationAtEveryOffsetFails) {
  TempDir dir;
  const std::vector<uint8_t> full = small_valid_file();
  ASSERT_EQ(try_open(dir, full, full.size()), "");
  for (size_t n = 0; n < full.size(); ++n) {
    EXPECT_NE(try_open(dir, full, n), "") << "a prefix of " << n << " bytes parsed";
  }
}

TEST(GgufCorrupt, RandomByteFlipsParseOrThrow) {
  TempDir dir;
  const std::vector<uint8_t> full = small_valid_file();
  std::mt19937 rng(20240611);
  int parsed = 0, failed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> b = full;
    const int flips = 1 + int(rng() % 3);
    for (int k = 0; k < flips; ++k) {
      const size_t at = rng() % b.size();
      b[at] ^= uint8_t(1 + rng() % 255);
    }
    (try_open(dir, b, b.size()).empty() ? parsed : failed)++;
  }
  // Flips in tensor data or string bytes still parse; flips in counts and types do not.
  EXPECT_GT(parsed, 0);
  EXPECT_GT(failed, 0);
}

// Expects `bytes` to fail with a message that contains `needle`.
void expect_rejected(const std::vector<uint8_t>& bytes, const std::string& needle) {
  TempDir dir;
  const std::string msg = try_open(dir, bytes, bytes.size());
  EXPECT_NE(msg, "") << "parsed; wanted an error naming " << needle;
  EXPECT_NE(msg.find(needle), std::string::npos) << msg;
}

TEST(GgufCorrupt, BadMagic) {
  Bytes b;
  b.u32(0x46554746).u32(3).u64(0).u64(0);
  expect_rejected(b.b, "magic");
}

TEST(GgufCorrupt, UnsupportedVersions) {
  expect_rejected(Bytes().header(1, 0, 0).b, "version 1");
  expect_rejected(Bytes().header(4, 0, 0).b, "version 4");
  expect_rejected(Bytes().header(0x03000000, 0, 0).b, "version");
}

TEST(GgufCorrupt, HugeCounts) {
  expect_rejected(Bytes().header(3, uint64_t(1) << 60, 0).zeros(64).b, "tensor_count");
  expect_rejected(Bytes().header(3, 0, uint64_t(1) << 60).zeros(64).b, "metadata_kv_count");
  expect_rejected(Bytes().header(3, ~uint64_t(0), ~uint64_t(0)).b, "count");
  // A u8 array claiming 2^60 elements.
  Bytes a;
  a.header(3, 0, 1).str("arr").u32(9).u32(0).u64(uint64_t(1) << 60).zeros(16);
  expect_rejected(a.b, "metadata key 'arr': array of 1152921504606846976");
  // An array of strings whose count fits the bytes only as u8s.
  Bytes s;
  s.header(3, 0, 1).str("arr").u32(9).u32(8).u64(4).zeros(16);
  expect_rejected(s.b, "'arr'");
}

TEST(GgufCorrupt, HugeStringLength) {
  Bytes k;
  k.header(3, 0, 1).u64(uint64_t(1) << 62).zeros(16);
  expect_rejected(k.b, "key of metadata entry 0: string length");
  Bytes v;
  v.header(3, 0, 1).str("name").u32(8).u64(~uint64_t(0)).zeros(8);
  expect_rejected(v.b, "metadata key 'name': string length");
  Bytes t;
  t.header(3, 1, 0).u64(uint64_t(1) << 40).zeros(40);
  expect_rejected(t.b, "name of tensor 0: string length");
}

TEST(GgufCorrupt, UnknownValueType) {
  expect_rejected(Bytes().header(3, 0, 1).str("k").u32(13).u32(0).b,
                  "metadata key 'k': unknown value type 13");
  expect_rejected(Bytes().header(3, 0, 1).str("k").u32(9).u32(77).u64(0).b,
                  "metadata key 'k': unknown array element type 77");
}

TEST(GgufCorrupt, BadBoolAndDeepNesting) {
  expect_rejected(Bytes().header(3, 0, 1).str("flag").u32(7).u8(2).b, "'flag': bool value 2");
  Bytes d;
  d.header(3, 0, 1).str("deep").u32(9);
  for (int i = 0; i < 40; ++i) d.u32(9).u64(1);
  d.u32(0).u64(0);
  expect_rejected(d.b, "'deep': arrays nested deeper");
}

TEST(GgufCorrupt, DuplicateKey) {
  Bytes b;
  b.header(3, 0, 2).str("a").u32(4).u32(1).str("a").u32(4).u32(2);
  expect_rejected(b.b, "duplicate metadata key 'a'");
}

TEST(GgufCorrupt, UnknownTensorType) {
  Bytes b;
  b.header(3, 1, 0).tensor("w", {4}, 99, 0).pad_to(32).zeros(64);
  expect_rejected(b.b, "tensor 'w': unknown or unsupported tensor type 99");
}

TEST(GgufCorrupt, TooManyOrZeroDims) {
  Bytes five;
  five.header(3, 1, 0).tensor("w", {1, 1, 1, 1, 4}, 0, 0).pad_to(32).zeros(64);
  expect_rejected(five.b, "tensor 'w': n_dims 5");
  Bytes none;
  none.header(3, 1, 0).tensor("w", {}, 0, 0).pad_to(32).zeros(64);
  expect_rejected(none.b, "tensor 'w': n_dims 0");
  Bytes zero;
  zero.header(3, 1, 0).tensor("w", {4, 0}, 0, 0).pad_to(32).zeros(64);
  expect_rejected(zero.b, "tensor 'w': dimension 1 is 0");
  Bytes overflow;
  overflow.header(3, 1, 0).tensor("w", {uint64_t(1) << 40, uint64_t(1) << 40}, 0, 0).zeros(64);
  expect_rejected(overflow.b, "tensor 'w'");
}

TEST(GgufCorrupt, RowNotWholeBlocks) {
  Bytes b;
  b.header(3, 1, 0).tensor("q", {16, 2}, 8, 0).pad_to(32).zeros(128);  // q8_0 blocks are 32
  expect_rejected(b.b, "tensor 'q': row length dims[0] = 16 is not a multiple");
}

TEST(GgufCorrupt, DuplicateTensor) {
  Bytes b;
  b.header(3, 2, 0).tensor("w", {8}, 0, 0).tensor("w", {8}, 0, 32).pad_to(32).zeros(64);
  expect_rejected(b.b, "duplicate tensor name 'w'");
}

TEST(GgufCorrupt, MisalignedOffset) {
  Bytes b;
  b.header(3, 1, 0).tensor("w", {4}, 0, 4).pad_to(32).zeros(64);
  expect_rejected(b.b, "tensor 'w': data offset 4 is not a multiple of the alignment 32");
}

TEST(GgufCorrupt, DataOutOfFile) {
  Bytes b;
  b.header(3, 1, 0).tensor("blk.0.attn_q.weight", {8, 4}, 0, 32).pad_to(32).zeros(96);
  // Data section at 96; the tensor's data is [128, 256) but the file has 192 bytes.
  ASSERT_EQ(b.b.size(), 192u);
  expect_rejected(b.b,
                  "tensor 'blk.0.attn_q.weight': data [offset 128, 128 bytes] extends past end of "
                  "file (192 bytes)");
  Bytes far;
  far.header(3, 1, 0).tensor("w", {8}, 0, ~uint64_t(31)).pad_to(32).zeros(64);
  expect_rejected(far.b, "tensor 'w'");
}

TEST(GgufCorrupt, AlignmentNotPowerOfTwo) {
  Bytes b;
  b.header(3, 0, 1).str("general.alignment").u32(4).u32(48);
  expect_rejected(b.b, "general.alignment': 48 is not a power of two");
  Bytes z;
  z.header(3, 0, 1).str("general.alignment").u32(4).u32(0);
  expect_rejected(z.b, "general.alignment");
  Bytes s;
  s.header(3, 0, 1).str("general.alignment").u32(8).str("32");
  expect_rejected(s.b, "general.alignment");
}

TEST(GgufCorrupt, EmptyAndMissingFiles) {
  expect_rejected({}, "magic");
  try {
    File::open("/nonexistent/dir/x.gguf");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/x.gguf"), std::string::npos);
  }
}

}  // namespace
}  // namespace ork::gguf
