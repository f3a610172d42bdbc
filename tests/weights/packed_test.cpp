// weights::packed: the packed form is quantize_linear tiled, and copy_rows of a slice equals
// packing that slice's rows alone (also for K-segmented weights, K > 8192).
#include <gtest/gtest.h>

#include "gen_model/gen_model.h"
#include "gguf/file.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "npu/matmul.h"
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

}  // namespace
}  // namespace ork::weights
