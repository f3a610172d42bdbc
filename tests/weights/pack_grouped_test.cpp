#include "weights/pack_grouped.h"

#include <gtest/gtest.h>

#include "npu/matmul.h"
#include "quant/decode.h"
#include "quant/requant.h"
#include "weights/packed.h"
#include "weights_test_util.h"

namespace ork::weights {
namespace {

using testutil::make_model;
using testutil::same_bytes;

TEST(PackGrouped, I8IsByteIdenticalToPackLinear) {
  ork::testing::TempDir dir;
  for (quant::Type t : {quant::Type::Q8_0, quant::Type::F32, quant::Type::Q4_K}) {
    gen::ModelSpec s = gen::preset("tiny-llama");
    s.weight_type = t;
    s.n_embd = t == quant::Type::Q4_K ? 256 : 64;
    s.n_ff = t == quant::Type::Q4_K ? 512 : 96;
    s.n_vocab = 320;
    const std::string path = dir.file("m.gguf");
    gen::write_model(s, path);
    const auto m = model::Model::load(path);
    ThreadPool pool(2);
    for (const model::Linear* l : m->weights().linears()) {
      const PackedHost ref = pack_linear(*l, nullptr);
      const PackedHost a = pack_linear_grouped(*l, npu::Dtype::kI8, nullptr);
      const PackedHost b = pack_linear_grouped(*l, npu::Dtype::kI8, &pool);
      EXPECT_TRUE(same_bytes(ref.view(), a.view())) << l->name();
      EXPECT_TRUE(same_bytes(ref.view(), b.view())) << l->name();
    }
  }
}

TEST(PackGrouped, KSegmentedWeightMatches) {
  // n_ff > 8192: the down projection has K > 8192 (two K segments).
  ork::testing::TempDir dir;
  gen::ModelSpec s = gen::preset("tiny-llama");
  s.weight_type = quant::Type::Q8_0;
  s.n_embd = 64;
  s.n_ff = 8192 + 96;
  s.n_layer = 1;
  s.n_vocab = 320;
  gen::write_model(s, dir.file("m.gguf"));
  const auto m = model::Model::load(dir.file("m.gguf"));
  const model::Linear& down = m->weights().layers[0].down;
  ASSERT_GT(down.k, 8192);
  ThreadPool pool(2);
  EXPECT_TRUE(same_bytes(pack_linear(down, nullptr).view(),
                         pack_linear_grouped(down, npu::Dtype::kI8, &pool).view()));
}

TEST(PackGrouped, F16IsTheNativeFp16LayoutOfTheDecodedWeight) {
  ork::testing::TempDir dir;
  const auto m = make_model(dir.file("m.gguf"));
  for (const model::Linear* l : m->weights().linears()) {
    std::vector<float> f(size_t(l->n * l->k));
    const int64_t rb = quant::row_bytes(l->w->type, l->k);
    for (int64_t r = 0; r < l->n; ++r) {
      quant::decode_row(l->w->type, l->w->data + r * rb, f.data() + r * l->k, l->k);
    }
    std::vector<uint16_t> h(f.size());
    quant::to_f16(f.data(), int64_t(f.size()), h.data());
    std::vector<uint8_t> ref(packed_bytes(l->n, l->k, npu::Dtype::kF16));
    npu::pack_weight_into_f16(h.data(), l->n, l->k, ref.data());
    const PackedHost p = pack_linear_grouped(*l, npu::Dtype::kF16, nullptr);
    EXPECT_EQ(p.dtype, npu::Dtype::kF16);
    EXPECT_TRUE(p.scales.empty());
    ASSERT_EQ(p.bytes.size(), ref.size());
    EXPECT_EQ(p.bytes, ref) << l->name();
  }
}

}  // namespace
}  // namespace ork::weights
