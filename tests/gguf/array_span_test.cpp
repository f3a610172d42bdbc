// Metadata arrays stay in the mapping: a parsed array of any length costs no memory per element and
// its elements decode on access (gguf::ArrayView).
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/error.h"
#include "gguf/file.h"
#include "gguf/test_util.h"

namespace ork::gguf {
namespace {

using testing::Bytes;
using testing::TempDir;

// Resident set of this process in kB (/proc/self/status), -1 when unknown.
long rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

TEST(GgufArraySpan, AGigabyteArrayParsesWithoutAllocatingPerElement) {
  TempDir dir;
  const std::string path = dir.file("big.gguf");
  constexpr uint64_t kCount = uint64_t(1) << 30;
  Bytes b;
  b.header(3, 0, 2).str("big").u32(uint32_t(ValueType::ARRAY)).u32(uint32_t(ValueType::UINT8)).u64(kCount);
  const uint64_t data_at = b.b.size();
  testing::write_bytes(path, b.b);
  // The array's bytes are a hole (zeros) but for one 7; then a string array after it.
  Bytes tail;
  tail.str("names").u32(uint32_t(ValueType::ARRAY)).u32(uint32_t(ValueType::STRING)).u64(3);
  tail.str("a").str("").str("ccc");
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const uint8_t seven = 7;
  ASSERT_EQ(::pwrite(fd, &seven, 1, off_t(data_at + 1000)), 1);
  ASSERT_EQ(::pwrite(fd, tail.b.data(), tail.b.size(), off_t(data_at + kCount)), ssize_t(tail.b.size()));
  ::close(fd);

  const long before = rss_kb();
  const File f = File::open(path);
  const ArrayView big = f.find("big")->as_array("big", ValueType::UINT8);
  EXPECT_EQ(big.size(), kCount);
  EXPECT_EQ(big[1000].u, 7u);
  EXPECT_EQ(big[kCount - 1].u, 0u);
  // An 80-byte Value per element would be 80 GiB; the parser touched nothing of the array.
  if (before > 0) { EXPECT_LT(rss_kb() - before, 64 * 1024); }
  const ArrayView names = f.find("names")->as_array("names", ValueType::STRING);
  ASSERT_EQ(names.size(), 3u);
  std::string joined;
  for (const Value& v : names) joined += std::string(v.str) + "|";
  EXPECT_EQ(joined, "a||ccc|");
  EXPECT_EQ(names[2].str, "ccc");
}

TEST(GgufArraySpan, CountsAreCappedByTheBytesLeft) {
  // 2^40 uint32 elements need 4 TiB; the file has 16 bytes after the count.
  Bytes b;
  b.header(3, 0, 1).str("a").u32(uint32_t(ValueType::ARRAY)).u32(uint32_t(ValueType::UINT32));
  b.u64(uint64_t(1) << 40).zeros(16);
  TempDir dir;
  const std::string path = dir.file("c.gguf");
  testing::write_bytes(path, b.b);
  try {
    File::open(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("array of 1099511627776 uint32 elements cannot fit in the 16 bytes"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ork::gguf
