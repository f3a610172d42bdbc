// runtime::ActivationSource: f32 rows, an FFN's glu, and rows quantized already (what a split call's
// two sides share) quantize to the same bits; a quantized source has no f32 form.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/error.h"
#include "runtime/activation_source.h"

namespace ork::runtime {
namespace {

std::vector<float> random_rows(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

TEST(ActivationSource, QuantizedRowsGiveTheBitsTheyWereQuantizedFrom) {
  const int64_t m = 3, k = 96;
  model::Linear w;
  w.k = k, w.n = 8;
  const std::vector<float> gate = random_rows(m * k, 1), up = random_rows(m * k, 2);
  for (const ActivationSource src : {ActivationSource::rows(gate.data()),
                                     ActivationSource::gated(ops::Glu::kSwiglu, gate.data(), up.data())}) {
    std::vector<int8_t> xq, xq2;
    std::vector<float> sa, sa2, act, rot;
    src.quantize(w, m, xq, sa, act, rot);
    ActivationSource::quantized(xq.data(), sa.data()).quantize(w, m, xq2, sa2, act, rot);
    EXPECT_EQ(xq2, xq);
    EXPECT_EQ(sa2, sa);
  }
}

TEST(ActivationSource, AQuantizedSourceHasNoFloatRows) {
  model::Linear w;
  w.k = 32, w.n = 4;
  gguf::TensorInfo info;
  info.name = "blk.0.ffn_down.weight";
  w.w = &info;
  const std::vector<int8_t> xq(32, 1);
  const std::vector<float> sa(1, 0.5f);
  std::vector<float> all;
  EXPECT_THROW(ActivationSource::quantized(xq.data(), sa.data()).materialize(w, 1, all), Error);
}

}  // namespace
}  // namespace ork::runtime
