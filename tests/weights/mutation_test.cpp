// A mutation driver over the two file readers: a generated model's GGUF (through gguf::File and
// model::Model::load) and its .orkpack (through PackReader and the Store). Every mutant must load
// or fail with ork::Error; never crash, hang or read out of bounds (scripts/test.sh runs this under
// ASan/UBSan). Deterministic: a fixed seed; ORK_MUTANTS sets the count per file (default 1500).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "gguf/file.h"
#include "model/model.h"
#include "weights/convert.h"
#include "weights/pack_reader.h"
#include "weights/store.h"
#include "weights_test_util.h"

namespace ork::weights {
namespace {

using testutil::read_file;
using testutil::write_file;

int mutant_count() {
  const char* v = std::getenv("ORK_MUTANTS");
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n > 0 ? n : 1500;
}

// One mutation of `b`, chosen by `rng`: bit flips, a byte set to a boundary value, a little-endian
// u32/u64 field overwritten with a boundary value (counts, lengths, offsets, types), a range
// deleted, duplicated or zeroed, or a truncation.
void mutate(std::vector<uint8_t>& b, std::mt19937_64& rng) {
  if (b.empty()) return;
  auto at = [&](size_t span) { return size_t(rng() % (b.size() > span ? b.size() - span : 1)); };
  static const uint64_t kBoundary[] = {0, 1, 2, 7, 8, 31, 32, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff,
                                       0xffffffff, uint64_t(1) << 32, uint64_t(1) << 40,
                                       0x7fffffffffffffff, ~uint64_t(0)};
  const uint64_t boundary = kBoundary[rng() % std::size(kBoundary)];
  switch (rng() % 8) {
    case 0:
      for (int k = 0, n = 1 + int(rng() % 4); k < n; ++k) b[at(1)] ^= uint8_t(1u << (rng() % 8));
      break;
    case 1: b[at(1)] = uint8_t(boundary); break;
    case 2: {
      const size_t p = at(4) & ~size_t(3);
      for (int k = 0; k < 4 && p + k < b.size(); ++k) b[p + k] = uint8_t(boundary >> (8 * k));
      break;
    }
    case 3: {
      const size_t p = at(8) & ~size_t(7);
      for (int k = 0; k < 8 && p + k < b.size(); ++k) b[p + k] = uint8_t(boundary >> (8 * k));
      break;
    }
    case 4: {
      const size_t p = at(1), n = std::min<size_t>(1 + rng() % 64, b.size() - p);
      b.erase(b.begin() + long(p), b.begin() + long(p + n));
      break;
    }
    case 5: {
      const size_t p = at(1), n = std::min<size_t>(1 + rng() % 64, b.size() - p);
      const std::vector<uint8_t> chunk(b.begin() + long(p), b.begin() + long(p + n));
      b.insert(b.begin() + long(at(1)), chunk.begin(), chunk.end());
      break;
    }
    case 6: {
      const size_t p = at(1), n = std::min<size_t>(1 + rng() % 256, b.size() - p);
      std::fill(b.begin() + long(p), b.begin() + long(p + n), uint8_t(0));
      break;
    }
    default: b.resize(size_t(rng() % b.size())); break;
  }
}

class Mutation : public ::testing::Test {
 protected:
  void SetUp() override {
    gguf_ = dir_.file("m.gguf");
    model_ = testutil::make_model(gguf_);
    pack_ = dir_.file("m.orkpack");
    ConvertOptions o;
    o.output_path = pack_;
    o.threads = 1;
    convert(*model_, o);
  }
  ork::testing::TempDir dir_;
  std::string gguf_, pack_;
  std::unique_ptr<model::Model> model_;
};

TEST_F(Mutation, GgufMutantsLoadOrFailWithAnError) {
  const std::vector<uint8_t> seed = read_file(gguf_);
  const std::string path = dir_.file("mutant.gguf");
  std::mt19937_64 rng(0x6767'7566);
  int loaded = 0, refused = 0;
  for (int i = 0; i < mutant_count(); ++i) {
    std::vector<uint8_t> b = seed;
    for (int k = 0, n = 1 + int(rng() % 3); k < n; ++k) mutate(b, rng);
    write_file(path, b);
    try {
      const auto m = model::Model::load(path);
      // Touch what a run would read: every metadata array element and every tensor byte.
      uint64_t sum = 0;
      for (const auto& kv : m->file().metadata()) {
        for (const gguf::Value& e : kv.value.elements()) sum += e.u + uint64_t(e.i) + e.str.size();
      }
      for (const auto& t : m->file().tensors()) {
        for (uint64_t j = 0; j < t.n_bytes; j += 64) sum += t.data[j];
      }
      volatile uint64_t sink = sum;
      (void)sink;
      ++loaded;
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_EQ(loaded + refused, mutant_count());
}

TEST_F(Mutation, OrkpackMutantsLoadOrRepackNeverServingWrongBytes) {
  const std::vector<uint8_t> seed = read_file(pack_);
  const std::string path = dir_.file("mutant.orkpack");
  std::vector<PackedHost> refs;
  for (const model::Linear* l : model_->weights().linears()) refs.push_back(pack_linear(*l, nullptr));
  std::mt19937_64 rng(0x6f72'6b70);
  const int count = std::max(1, mutant_count() / 5);  // each mutant also runs a Store over 15 weights
  int opened = 0;
  for (int i = 0; i < count; ++i) {
    std::vector<uint8_t> b = seed;
    for (int k = 0, n = 1 + int(rng() % 3); k < n; ++k) mutate(b, rng);
    write_file(path, b);
    try {
      const auto r = PackReader::open(path);
      for (const PackEntry& e : r->entries()) (void)r->verify(e);
      ++opened;
    } catch (const Error&) {
    }
    // The Store repacks whatever is damaged and never serves wrong bytes (it rebuilds the file).
    Store s(*model_, StoreOptions{path, false});
    const auto& ls = model_->weights().linears();
    for (size_t w = 0; w < ls.size(); ++w) {
      ASSERT_TRUE(testutil::same_bytes(s.get(*ls[w]).view, refs[w].view())) << "mutant " << i << ", " << ls[w]->name();
    }
  }
  EXPECT_GT(count, 0);
  (void)opened;
}

}  // namespace
}  // namespace ork::weights
