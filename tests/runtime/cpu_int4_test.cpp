// runtime::CpuInt4Matmul: the scheme names, its results against the quantization functions it is
// specified by, and W4A8's int32 sums against the simulated NPU's int4 tasks (W4A8 by splitting the
// activation) — the same integers, so the same bits after dequantization.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "npu/device.h"
#include "npu/layout_int4.h"
#include "npu/matmul_int4.h"
#include "quant/hadamard.h"
#include "quant/int4_split.h"
#include "quant/norm_fold.h"
#include "quant/requant.h"
#include "quant/requant_int4.h"
#include "runtime/cpu_int4_matmul.h"

namespace ork::runtime {
namespace {

TEST(Int4Scheme, ParsesTheSchemesAndRefusesOthers) {
  EXPECT_EQ(Int4Scheme::parse("w4a8").str(), "w4a8");
  EXPECT_EQ(Int4Scheme::parse("w4a4-g32").str(), "w4a4-g32");
  EXPECT_TRUE(Int4Scheme::parse("w4a4").a4);
  EXPECT_EQ(Int4Scheme::parse("w4a8-g480").group, 480);
  for (const char* bad : {"", "w8a8", "w4a8-g", "w4a8-g48", "w4a8-g512", "w4a8-g32x", "w4a8g32"})
    EXPECT_THROW(Int4Scheme::parse(bad), Error) << bad;
}

class CpuInt4 : public ::testing::Test {
 protected:
  void SetUp() override {
    gen::write_model(testing::small_q8_model(), dir_.file("m.gguf"));
    model_ = model::Model::load(dir_.file("m.gguf"));
  }
  const model::Linear& linear(size_t i) { return *model_->weights().linears()[i]; }
  std::vector<float> input(int64_t m, int64_t k) {
    std::vector<float> x(size_t(m * k));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 37) % 23) / 7.0f - 1.5f;
    return x;
  }
  testing::TempDir dir_;
  std::unique_ptr<model::Model> model_;
};

// The input as the int4 paths quantize it: each column divided by the fold factor of the linear's
// input norm weight (quant/norm_fold.h), then rotated.
std::vector<float> unfolded_rotated(const model::Linear& lin, const std::vector<float>& x, int64_t m, int64_t k) {
  std::vector<float> xr = x;
  if (lin.in_norm != nullptr) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t t = 0; t < k; ++t) xr[size_t(i * k + t)] /= quant::norm_fold_factor(lin.in_norm[t]);
  }
  quant::hadamard_rotate_rows(xr.data(), m, k, quant::int8_rotation_block(k));
  return xr;
}

// The formulas of cpu_int4_matmul.h, composed from the quant functions and plain loops.
std::vector<float> reference(const model::Linear& lin, const CpuInt4Matmul::Weight& w, const std::vector<float>& x,
                             int64_t m, int64_t k, int64_t n, bool a4) {
  std::vector<float> xr = unfolded_rotated(lin, x, m, k);
  std::vector<int8_t> xq(size_t(m * k));
  std::vector<float> sa(static_cast<size_t>(m));
  a4 ? quant::quantize_rows_i4(xr.data(), m, k, xq.data(), sa.data())
     : quant::quantize_rows_i8(xr.data(), m, k, xq.data(), sa.data());
  std::vector<int32_t> c(size_t(w.groups * m * n), 0);
  for (int64_t g = 0; g < w.groups; ++g)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t t = g * w.group; t < std::min(k, (g + 1) * w.group); ++t)
          c[size_t((g * m + i) * n + j)] += int32_t(xq[size_t(i * k + t)]) * w.q[size_t(j * k + t)];
  std::vector<float> y(size_t(m * n));
  quant::dequantize_i32_groups(c.data(), w.groups, m, n, sa.data(), w.scales.data(), y.data());
  return y;
}

TEST_F(CpuInt4, MatchesItsStatedFormulasBitForBit) {
  ThreadPool pool(2);
  for (const char* scheme : {"w4a8", "w4a8-g32", "w4a4", "w4a4-g64"}) {
    const model::Linear& w = linear(0);
    const int64_t m = 5;
    CpuInt4Matmul mm(pool, model_->weights().linears().size(), Int4Scheme::parse(scheme));
    const auto x = input(m, w.k);
    std::vector<float> y(size_t(m * w.n));
    mm.matmul(w, x.data(), m, y.data());
    const auto q = CpuInt4Matmul::quantize(w, Int4Scheme::parse(scheme), nullptr);
    ASSERT_NE(w.in_norm, nullptr);  // attn_q: the fold is part of what is checked
    const auto want = reference(w, q, x, m, w.k, w.n, Int4Scheme::parse(scheme).a4);
    EXPECT_EQ(std::memcmp(y.data(), want.data(), y.size() * sizeof(float)), 0) << scheme;
  }
}

TEST_F(CpuInt4, W4A8SumsEqualTheSimulatedNpuW4A8BySplitting) {
  // Per-row int4 weights of a real linear, int8 activations: the CPU's int32 sums against the
  // simulated device's int4 × int4 → int16 tasks on the split activation rows.
  const model::Linear& w = linear(0);
  const int64_t m = 3, k = w.k, n = w.n;
  const auto q = CpuInt4Matmul::quantize(w, Int4Scheme::parse("w4a8"), nullptr);
  std::vector<float> xr = input(m, k);
  quant::hadamard_rotate_rows(xr.data(), m, k, quant::int8_rotation_block(k));
  std::vector<int8_t> xq(size_t(m * k));
  std::vector<float> sa(static_cast<size_t>(m));
  quant::quantize_rows_i8(xr.data(), m, k, xq.data(), sa.data());
  std::vector<int32_t> cpu(size_t(m * n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t t = 0; t < k; ++t) cpu[size_t(i * n + j)] += int32_t(xq[size_t(i * k + t)]) * q.q[size_t(j * k + t)];

  auto dev = npu::Device::open_sim();
  npu::Buffer wb = dev->alloc(npu::packed_weight_bytes_i4(n, k), 0);
  npu::pack_b_i4(q.q.data(), n, k, wb.host());
  wb.sync_to_device();
  std::vector<int8_t> halves(size_t(2 * m * k));
  quant::split_int8_rows_to_int4(xq.data(), m, k, halves.data());
  std::vector<int32_t> r(size_t(2 * m * n)), corr(static_cast<size_t>(n)), npu_c(static_cast<size_t>(m * n));
  npu::matmul_i4(*dev, wb, halves.data(), 2 * m, k, n, r.data());
  quant::int4_split_correction(q.q.data(), n, k, corr.data());
  quant::combine_int4_split(r.data(), m, n, corr.data(), npu_c.data());
  EXPECT_EQ(npu_c, cpu);
}

TEST_F(CpuInt4, W4A8WithGroupsOf32IsBitIdenticalOnTheSimulatedNpu) {
  // The chosen scheme end to end on a real linear: the CPU path's output against the simulated
  // device's int4 tasks with K chunks of 32 columns (one per scale group), the activation split into
  // two int4 rows, each chunk's sums corrected and combined, then the same group dequantization.
  const model::Linear& w = linear(0);
  const int64_t m = 4, k = w.k, n = w.n, chunk = 32;
  const Int4Scheme scheme = Int4Scheme::parse("w4a8-g32");
  const auto q = CpuInt4Matmul::quantize(w, scheme, nullptr);
  ASSERT_EQ(q.group, chunk);
  ASSERT_GT(q.groups, 1);
  const auto x = input(m, k);
  ThreadPool pool(2);
  CpuInt4Matmul mm(pool, model_->weights().linears().size(), scheme);
  std::vector<float> y_cpu(static_cast<size_t>(m * n));
  mm.matmul(w, x.data(), m, y_cpu.data());

  std::vector<float> xr = unfolded_rotated(w, x, m, k);
  std::vector<int8_t> xq(static_cast<size_t>(m * k)), halves(static_cast<size_t>(2 * m * k));
  std::vector<float> sa(static_cast<size_t>(m));
  quant::quantize_rows_i8(xr.data(), m, k, xq.data(), sa.data());
  quant::split_int8_rows_to_int4(xq.data(), m, k, halves.data());
  auto dev = npu::Device::open_sim();
  npu::Buffer wb = dev->alloc(npu::packed_weight_bytes_i4(n, k), 0);
  npu::pack_b_i4(q.q.data(), n, k, wb.host(), false, chunk);
  wb.sync_to_device();
  std::vector<int32_t> r(static_cast<size_t>(q.groups * 2 * m * n));
  npu::matmul_i4_chunks(*dev, wb, halves.data(), 2 * m, k, n, chunk, r.data());
  std::vector<int32_t> c(static_cast<size_t>(q.groups * m * n));
  for (int64_t g = 0; g < q.groups; ++g) {
    std::vector<int8_t> bg(static_cast<size_t>(n * chunk));
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(bg.data() + j * chunk, q.q.data() + j * k + g * chunk, size_t(chunk));
    std::vector<int32_t> corr(static_cast<size_t>(n));
    quant::int4_split_correction(bg.data(), n, chunk, corr.data());
    quant::combine_int4_split(r.data() + g * 2 * m * n, m, n, corr.data(), c.data() + g * m * n);
  }
  std::vector<float> y_npu(static_cast<size_t>(m * n));
  quant::dequantize_i32_groups(c.data(), q.groups, m, n, sa.data(), q.scales.data(), y_npu.data());
  EXPECT_EQ(std::memcmp(y_cpu.data(), y_npu.data(), y_cpu.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace ork::runtime
