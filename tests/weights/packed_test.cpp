// weights::packed: the packed form is quantize_linear tiled, and copy_rows of a slice equals
// packing that slice's rows alone (also for K-segmented weights, K > 8192).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gen_model/gen_model.h"
#include "gguf/file.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "npu/matmul.h"
#include "quant/decode.h"
#include "quant/hadamard.h"
#include "quant/requant.h"
#include "weights/packed.h"

namespace ork::weights {
namespace {

TEST(Packed, CopyRowsEqualsPackingTheRowsAlone) {
  testing::TempDir dir;
  for (int64_t k : {64, 8192 + 96}) {
    gen::ModelSpec s;
    s.n_embd = int(k);
    s.n_ff = 96;
    s.n_layer = 1;
    s.n_vocab = 300;
    s.n_head = 2;
    s.n_head_kv = 2;
    s.head_dim = 32;
    s.weight_type = quant::Type::Q8_0;
    const std::string path = dir.file("m" + std::to_string(k) + ".gguf");
    gen::write_model(s, path);
    const auto m = model::Model::load(path);
    const model::Linear& w = m->weights().output;  // 300 rows of k
    const PackedHost whole = pack_linear(w, nullptr);
    ASSERT_EQ(whole.bytes.size(), packed_bytes(w.n, w.k));
    const QuantizedRows q = quantize_linear(w, nullptr);
    EXPECT_EQ(q.scales, whole.scales);
    for (auto [n0, n1] : {std::pair<int64_t, int64_t>{0, 32}, {32, 96}, {64, 300}, {0, 300}, {288, 300}}) {
      std::vector<uint8_t> slice(packed_bytes(n1 - n0, w.k));
      copy_rows(whole.view(), n0, n1, slice.data());
      std::vector<uint8_t> alone(packed_bytes(n1 - n0, w.k));
      npu::pack_weight_into(q.q.data() + n0 * w.k, n1 - n0, w.k, alone.data());
      EXPECT_EQ(slice, alone) << "k " << k << " rows [" << n0 << ", " << n1 << ")";
    }
    std::vector<uint8_t> out(packed_bytes(32, w.k));
    EXPECT_THROW(copy_rows(whole.view(), 16, 48, out.data()), Error);
  }
}

// The packing contract (orkpack layout version 2): decode each row, rotate it by the block-Hadamard
// transform of K (int8_rotation_block), then quantize per row.
TEST(Packed, QuantizeLinearRotatesEachRowThenQuantizes) {
  testing::TempDir dir;
  gen::ModelSpec s = gen::preset("default");
  const std::string path = dir.file("m.gguf");
  gen::write_model(s, path);
  const auto m = model::Model::load(path);
  for (const model::Linear* w : m->weights().linears()) {
    const int64_t b = quant::int8_rotation_block(w->k);
    ASSERT_GT(b, 1) << w->name();
    const QuantizedRows q = quantize_linear(*w, nullptr);
    std::vector<float> f(size_t(w->k));
    std::vector<int8_t> want(size_t(w->k));
    const int64_t row_bytes = quant::row_bytes(w->w->type, w->k);
    for (int64_t n = 0; n < w->n; n += 7) {
      quant::decode_row(w->w->type, w->w->data + n * row_bytes, f.data(), w->k);
      quant::hadamard_rotate_rows(f.data(), 1, w->k, b);
      float scale = 0;
      quant::quantize_weights_i8(f.data(), 1, w->k, want.data(), &scale);
      ASSERT_EQ(q.scales[size_t(n)], scale) << w->name() << " row " << n;
      ASSERT_EQ(0, std::memcmp(q.q.data() + n * w->k, want.data(), size_t(w->k))) << w->name() << " row " << n;
    }
  }
}

}  // namespace
}  // namespace ork::weights
