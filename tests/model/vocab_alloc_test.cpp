// A vocabulary array larger than the machine can hold is an ork::Error naming the key, the count
// and the bytes, not std::bad_alloc.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/error.h"
#include "gguf/file.h"
#include "gguf/test_util.h"
#include "model/tokenizer_vocab.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

using gguf::testing::Bytes;

bool overcommit_always() {
  std::ifstream in("/proc/sys/vm/overcommit_memory");
  int mode = 0;
  return (in >> mode) && mode == 1;
}

TEST(VocabAlloc, ScoresTheMachineCannotHoldAreAnErrorNamingTheKey) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizer allocators abort on a 4 TiB request instead of failing it";
#endif
#if defined(ORK_TESTS_UNDER_EMULATOR)
  GTEST_SKIP() << "qemu-user kills the process on a 4 TiB request instead of failing it";
#endif
  // With overcommit "always" the reservation would succeed and filling it would exhaust the machine.
  if (overcommit_always()) GTEST_SKIP() << "vm.overcommit_memory = 1";
  constexpr uint64_t kCount = uint64_t(1) << 40;  // 4 TiB of float32 in the file (a hole), 4 TiB in RAM
  ork::testing::TempDir dir;
  const std::string path = dir.file("v.gguf");
  Bytes b;
  b.header(3, 0, 3);
  b.str("tokenizer.ggml.model").u32(uint32_t(gguf::ValueType::STRING)).str("llama");
  b.str("tokenizer.ggml.tokens").u32(uint32_t(gguf::ValueType::ARRAY)).u32(uint32_t(gguf::ValueType::STRING));
  b.u64(1).str("a");
  b.str("tokenizer.ggml.scores").u32(uint32_t(gguf::ValueType::ARRAY)).u32(uint32_t(gguf::ValueType::FLOAT32));
  b.u64(kCount);
  gguf::testing::write_bytes(path, b.b);
  std::error_code ec;
  std::filesystem::resize_file(path, b.b.size() + kCount * 4, ec);
  if (ec) GTEST_SKIP() << "cannot make a 4 TiB sparse file here: " << ec.message();
  std::unique_ptr<gguf::File> f;
  try {
    f = std::make_unique<gguf::File>(gguf::File::open(path));
  } catch (const Error& e) {  // e.g. an emulator that cannot map 4 TiB
    GTEST_SKIP() << "cannot map the 4 TiB file here: " << e.what();
  }
  try {
    read_vocab(*f);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("tokenizer.ggml.scores: cannot allocate 1099511627776 elements"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace ork::model
