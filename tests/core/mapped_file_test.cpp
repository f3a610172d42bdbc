#include "core/mapped_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"

namespace ork {
namespace {

// A file of `pages` pages, page p filled with the byte p & 0xff; removed by the destructor.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, size_t bytes) {
    path = (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))).string();
    std::vector<uint8_t> data(bytes);
    const size_t page = size_t(::sysconf(_SC_PAGESIZE));
    for (size_t i = 0; i < bytes; ++i) data[i] = uint8_t(i / page);
    FILE* f = std::fopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(std::fwrite(data.data(), 1, bytes, f), bytes);
    std::fclose(f);
  }
  ~TempFile() { std::remove(path.c_str()); }
};

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Reads one byte of every page of [begin, end); returns their sum (so the reads are kept).
unsigned read_pages(const MappedFile& m, uint64_t begin, uint64_t end) {
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  unsigned sum = 0;
  for (uint64_t p = begin; p < end; p += page) sum += *static_cast<volatile const uint8_t*>(m.data() + p);
  return sum;
}

TEST(MappedFile, MapPagesLeavesNoFaultsForTheirReads) {
#if defined(ORK_TESTS_UNDER_EMULATOR)
  // qemu-user takes the madvise without mapping anything, and counts its own faults.
  constexpr bool kCountsFaults = false;
#else
  constexpr bool kCountsFaults = true;
#endif
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t pages = 512;
  TempFile f("ork-mapped-file-test", pages * page);
  MappedFile m(f.path);
  unsigned want = 0;
  for (uint64_t p = 0; p < pages; ++p) want += unsigned(p & 0xff);

  // Dropped pages fault back in when read (the kernel maps pages around each fault: fault-around,
  // large folios; at least one fault).
  ASSERT_TRUE(m.drop_pages(0, m.size()));
  long before = minor_faults();
  EXPECT_EQ(read_pages(m, 0, m.size()), want);
  if (kCountsFaults) {
    EXPECT_GE(minor_faults() - before, 1);
  }

  // Mapped ahead, from an offset inside a page to the end: reading them takes no fault.
  ASSERT_TRUE(m.drop_pages(0, m.size()));
  ASSERT_TRUE(m.map_pages(page / 2, m.size()));
  before = minor_faults();
  EXPECT_EQ(read_pages(m, 0, m.size()), want);
  if (kCountsFaults) {
    EXPECT_LE(minor_faults() - before, 1);
  }
}

TEST(MappedFile, MapPagesOutsideTheFileIsRefused) {
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  TempFile f("ork-mapped-file-test-range", 4 * page);
  MappedFile m(f.path);
  EXPECT_FALSE(m.map_pages(m.size(), 1));
  EXPECT_FALSE(m.map_pages(m.size() + page, page));
  EXPECT_TRUE(m.map_pages(page, 100 * page));  // clipped to the file's end
  EXPECT_TRUE(m.map_pages(0, 0));
  EXPECT_THROW(MappedFile("/nonexistent/ork-mapped-file"), Error);
}

}  // namespace
}  // namespace ork
