// ork's decoders against ggml's own dequantizer: tests/fixtures/ggml_dequant/<type>.bin hold blocks of
// each GGUF type (quantized by ggml from edge-valued inputs, and random valid bytes) and the floats
// ggml's to_float made of them (bench/llama_cpp/dequant_blocks.cpp, run by
// bench/llama_cpp/make_dequant_fixtures.sh against llama.cpp's ggml; the version is in SOURCE there).
// Every decoded float must equal ggml's bit for bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "build_dirs.h"
#include "quant/decode.h"
#include "quant/types.h"

namespace ork::quant {
namespace {

const std::string kDir = ork::testing::source_dir() + "/tests/fixtures/ggml_dequant/";

// One fixture file (layout in bench/llama_cpp/dequant_blocks.cpp).
struct Fixture {
  uint32_t type = 0;
  uint64_t n = 0;
  std::vector<uint8_t> raw;      // the encoded row
  std::vector<uint32_t> want;    // ggml's floats, as bits
};

// Reads `path`; fails the test (and returns false) when it is missing or malformed.
bool read_fixture(const std::string& path, Fixture& f) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << path << ": cannot open (bench/llama_cpp/make_dequant_fixtures.sh writes it)";
    return false;
  }
  const std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr size_t kHeader = 8 + 4 + 8 + 8;
  if (b.size() < kHeader || std::memcmp(b.data(), "ORKDQ001", 8) != 0) {
    ADD_FAILURE() << path << ": not a dequant fixture";
    return false;
  }
  uint64_t bytes = 0;
  std::memcpy(&f.type, b.data() + 8, 4);
  std::memcpy(&f.n, b.data() + 12, 8);
  std::memcpy(&bytes, b.data() + 20, 8);
  if (b.size() != kHeader + bytes + 4 * f.n) {
    ADD_FAILURE() << path << ": " << b.size() << " bytes, the header says " << kHeader + bytes + 4 * f.n;
    return false;
  }
  f.raw.assign(b.begin() + kHeader, b.begin() + std::ptrdiff_t(kHeader + bytes));
  f.want.resize(f.n);
  std::memcpy(f.want.data(), b.data() + kHeader + bytes, 4 * f.n);
  return true;
}

class GgmlDequantOracle : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GgmlDequantOracle, DecodesBitIdenticalToGgml) {
  const Type type = Type(GetParam());
  const std::string name(traits(type).name);
  Fixture f;
  ASSERT_TRUE(read_fixture(kDir + name + ".bin", f));
  ASSERT_EQ(f.type, GetParam()) << name << ".bin holds another type";
  ASSERT_EQ(uint64_t(row_bytes(type, int64_t(f.n))), f.raw.size()) << name;
  std::vector<float> got(f.n, -12345.0f);
  decode_row(type, f.raw.data(), got.data(), int64_t(f.n));
  const int64_t block = traits(type).block_size == 1 ? 32 : traits(type).block_size;
  int64_t mismatches = 0;
  for (uint64_t i = 0; i < f.n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &got[i], 4);
    if (bits == f.want[i]) continue;
    if (++mismatches <= 5) {
      float want;
      std::memcpy(&want, &f.want[i], 4);
      ADD_FAILURE() << name << " element " << i << " (block " << int64_t(i) / block << "): ork " << got[i]
                    << ", ggml " << want;
    }
  }
  EXPECT_EQ(mismatches, 0) << name << ": of " << f.n << " elements";
}

// Every type ork decodes, except q8_1: ggml has no dequantizer for it (bench/llama_cpp/dequant_blocks.cpp).
std::vector<uint32_t> decoded_types() {
  std::vector<uint32_t> ids;
  for (uint32_t id = 0; id < 64; ++id)
    if (is_supported(id) && Type(id) != Type::Q8_1) ids.push_back(id);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(Types, GgmlDequantOracle, ::testing::ValuesIn(decoded_types()),
                         [](const ::testing::TestParamInfo<uint32_t>& i) {
                           return std::string(traits(Type(i.param)).name);
                         });

}  // namespace
}  // namespace ork::quant
