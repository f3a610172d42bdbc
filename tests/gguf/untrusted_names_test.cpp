// The parser quotes names it read from the file (metadata keys, tensor names) in its errors: no
// control byte reaches the message, the text past a NUL is kept, a long name is capped.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "gguf/file.h"
#include "gguf/test_util.h"

namespace ork::gguf {
namespace {

using namespace std::string_literals;
using testing::Bytes;
using testing::TempDir;

const std::string kEvil = "w\nork: error: forged\x1b[2J\0after"s;

std::string open_error(const std::vector<uint8_t>& bytes) {
  TempDir dir;
  const std::string path = dir.file("n.gguf");
  testing::write_bytes(path, bytes);
  try {
    File::open(path);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

void expect_clean(const std::string& msg) {
  for (const char c : msg) EXPECT_FALSE(uint8_t(c) < 0x20 || uint8_t(c) == 0x7f) << msg;
  EXPECT_NE(msg.find("w\\nork: error: forged\\x1b[2J\\x00after"), std::string::npos) << msg;
}

TEST(GgufUntrustedNames, TensorNameInErrors) {
  Bytes dims;
  dims.header(3, 1, 0).tensor(kEvil, {}, 0, 0).pad_to(32).zeros(64);
  expect_clean(open_error(dims.b));
  Bytes dup;
  dup.header(3, 2, 0).tensor(kEvil, {8}, 0, 0).tensor(kEvil, {8}, 0, 32).pad_to(32).zeros(64);
  const std::string msg = open_error(dup.b);
  expect_clean(msg);
  EXPECT_NE(msg.find("duplicate tensor name"), std::string::npos) << msg;
}

TEST(GgufUntrustedNames, MetadataKeyInErrors) {
  Bytes b;
  b.header(3, 0, 1).str(kEvil).u32(99);  // unknown value type
  const std::string msg = open_error(b.b);
  expect_clean(msg);
  EXPECT_NE(msg.find("unknown value type 99"), std::string::npos) << msg;
}

TEST(GgufUntrustedNames, LongTensorNameIsCapped) {
  Bytes b;
  b.header(3, 1, 0).tensor(std::string(100000, 't'), {}, 0, 0).pad_to(32).zeros(64);
  const std::string msg = open_error(b.b);
  EXPECT_LT(msg.size(), 500u);
  EXPECT_NE(msg.find("(100000 bytes)"), std::string::npos) << msg;
}

}  // namespace
}  // namespace ork::gguf
