// gen::write_requant_variant: every 2-D tensor becomes the reference quantizer's blocks of its
// decoded rows, everything else is copied byte for byte; bad rows are one error naming the tensor.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "gen_model/requant_variant.h"
#include "gguf/file.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "quant/decode.h"

namespace ork::gen {
namespace {

TEST(RequantVariant, TwoDimensionalTensorsAreRequantizedTheRestCopied) {
  testing::TempDir dir;
  write_model(testing::small_q8_model(), dir.file("m.gguf"));
  write_requant_variant(dir.file("m.gguf"), dir.file("q4.gguf"), quant::Type::Q4_0);
  const gguf::File in = gguf::File::open(dir.file("m.gguf"));
  const gguf::File out = gguf::File::open(dir.file("q4.gguf"));
  ASSERT_EQ(in.tensors().size(), out.tensors().size());
  const quant::TypeTraits& q4 = quant::traits(quant::Type::Q4_0);
  int requantized = 0;
  for (const gguf::TensorInfo& t : in.tensors()) {
    const gguf::TensorInfo& o = out.tensor(t.name);
    EXPECT_EQ(o.dims, t.dims) << t.name;
    if (t.dims.size() < 2) {
      EXPECT_EQ(o.type, t.type) << t.name;
      ASSERT_EQ(o.n_bytes, t.n_bytes);
      EXPECT_EQ(std::memcmp(o.data, t.data, t.n_bytes), 0) << t.name;
      continue;
    }
    ++requantized;
    ASSERT_EQ(o.type, quant::Type::Q4_0) << t.name;
    // Row 1: the reference quantizer's blocks of the decoded source row.
    const int64_t k = int64_t(t.row_length());
    std::vector<float> row(static_cast<size_t>(k));
    quant::decode_row(t.type, t.data + t.n_bytes / t.rows(), row.data(), k);
    std::vector<uint8_t> want(static_cast<size_t>(quant::row_bytes(quant::Type::Q4_0, k)));
    q4.quantize(row.data(), want.data(), k);
    EXPECT_EQ(std::memcmp(o.data + want.size(), want.data(), want.size()), 0) << t.name;
  }
  EXPECT_GT(requantized, 3);
  for (const gguf::KeyValue& kv : in.metadata())
    if (kv.key != "general.alignment") { EXPECT_NE(out.find(kv.key), nullptr) << kv.key; }
}

TEST(RequantVariant, RowsThatAreNotWholeBlocksAreRefused) {
  testing::TempDir dir;
  gen::ModelSpec s = testing::small_q8_model();
  s.n_embd = 64;
  write_model(s, dir.file("m.gguf"));
  ASSERT_NE(s.n_embd % 256, 0) << "the test needs rows that are not whole q4_K blocks";
  try {
    write_requant_variant(dir.file("m.gguf"), dir.file("q.gguf"), quant::Type::Q4_K);  // blocks of 256
    FAIL() << "accepted rows of " << s.n_embd;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a whole number of q4_K blocks"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ork::gen
