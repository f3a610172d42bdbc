// weights::packed_int4: the int4 device form is quantize_linear_i4 (decode, fold the input's norm
// weight, rotate, int4 with one scale per row) packed in K chunks of 480; copy_rows of a slice equals packing that slice's rows
// alone; the W4A8 corrections read from the packed bytes equal 8 · Σ codes per row; the plan
// counts int4 bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "npu/layout_int4.h"
#include "quant/decode.h"
#include "quant/hadamard.h"
#include "quant/norm_fold.h"
#include "quant/requant_int4.h"
#include "weights/packed_int4.h"
#include "weights/plan.h"

namespace ork::weights {
namespace {

std::unique_ptr<model::Model> model_with_k(testing::TempDir& dir, int64_t k) {
  gen::ModelSpec s;
  s.n_embd = int(k);
  s.n_ff = 96;
  s.n_layer = 1;
  s.n_vocab = 300;  // output: 300 rows, not a multiple of 64
  s.n_head = 2;
  s.n_head_kv = 2;
  s.head_dim = 32;
  s.weight_type = quant::Type::Q4_0;
  const std::string path = dir.file("m" + std::to_string(k) + ".gguf");
  gen::write_model(s, path);
  return model::Model::load(path);
}

TEST(PackedInt4, PacksTheQuantizedRowsPerRowInChunksOf480) {
  testing::TempDir dir;
  const auto m = model_with_k(dir, 1024);  // three K chunks: 480, 480, 64
  const model::Linear& w = m->weights().output;
  const PackedHost p = pack_linear_i4(w, nullptr);
  ASSERT_EQ(p.dtype, npu::Dtype::kI4);
  ASSERT_EQ(p.bytes.size(), npu::packed_weight_bytes_i4(w.n, w.k));
  ASSERT_EQ(p.bytes.size(), packed_bytes(w.n, w.k, npu::Dtype::kI4));
  EXPECT_EQ(p.view().scale_count(), w.n);
  // The contract, step by step: decode, fold the output norm's weight into the columns, rotate by
  // the int8 path's block, int4 with one scale per row.
  ASSERT_EQ(w.in_norm, m->weights().output_norm);
  std::vector<float> f(size_t(w.k));
  std::vector<int8_t> q(size_t(w.n * w.k));
  std::vector<float> sc(size_t(w.n));
  const int64_t rb = quant::row_bytes(w.w->type, w.k);
  for (int64_t r = 0; r < w.n; ++r) {
    quant::decode_row(w.w->type, w.w->data + r * rb, f.data(), w.k);
    for (int64_t j = 0; j < w.k; ++j) f[size_t(j)] *= quant::norm_fold_factor(w.in_norm[j]);
    quant::hadamard_rotate_rows(f.data(), 1, w.k, quant::int8_rotation_block(w.k));
    quant::quantize_weights_i4(f.data(), 1, w.k, w.k, q.data() + r * w.k, sc.data() + r);
  }
  EXPECT_EQ(p.scales, sc);
  std::vector<int8_t> back(q.size());
  npu::unpack_b_i4(p.bytes.data(), w.n, w.k, back.data(), npu::kI4KChunk);
  EXPECT_EQ(back, q);
  const QuantizedRowsI4 qr = quantize_linear_i4(w, 32, nullptr);  // groups (the CPU path's w4a8-g32)
  EXPECT_EQ(qr.groups, 32);
  EXPECT_THROW(quantize_linear_i4(w, 48, nullptr), Error);  // not a multiple of 32
  EXPECT_EQ(quantize_linear_i4(w, 4096, nullptr).groups, 1);  // ≥ K: one scale per row
  EXPECT_EQ(quantize_linear_i4(w, 4096, nullptr).q, q);
}

TEST(PackedInt4, CopyRowsEqualsPackingTheRowsAlone) {
  testing::TempDir dir;
  for (int64_t k : {64, 96, 1024}) {
    const auto m = model_with_k(dir, k);
    const model::Linear& w = m->weights().output;
    const PackedHost whole = pack_linear_i4(w, nullptr);
    const QuantizedRowsI4 q = quantize_linear_i4(w, w.k, nullptr);
    for (auto [n0, n1] : {std::pair<int64_t, int64_t>{0, 64}, {64, 192}, {128, 300}, {0, 300}, {256, 300}}) {
      std::vector<uint8_t> slice(npu::packed_weight_bytes_i4(n1 - n0, w.k));
      copy_rows(whole.view(), n0, n1, slice.data());
      std::vector<uint8_t> alone(slice.size());
      npu::pack_b_i4(q.q.data() + n0 * w.k, n1 - n0, w.k, alone.data(), false, npu::kI4KChunk);
      EXPECT_EQ(slice, alone) << "k " << k << " rows [" << n0 << ", " << n1 << ")";
    }
    std::vector<uint8_t> out(npu::packed_weight_bytes_i4(64, w.k));
    EXPECT_THROW(copy_rows(whole.view(), 32, 96, out.data()), Error);   // not 64-aligned
    EXPECT_THROW(copy_rows(whole.view(), 0, 100, out.data()), Error);   // end neither aligned nor n
  }
}

TEST(PackedInt4, CorrectionsAreEightTimesTheRowSumsOfTheCodes) {
  testing::TempDir dir;
  const auto m = model_with_k(dir, 1024);  // the row's sum spans three K chunks
  const model::Linear& w = m->weights().output;
  const PackedHost p = pack_linear_i4(w, nullptr);
  const QuantizedRowsI4 q = quantize_linear_i4(w, w.k, nullptr);
  const std::vector<int32_t> corr = int4_split_corrections(p.view());
  ASSERT_EQ(corr.size(), size_t(w.n));
  for (int64_t j = 0; j < w.n; ++j) {
    int32_t s = 0;
    for (int64_t t = 0; t < w.k; ++t) s += q.q[size_t(j * w.k + t)];
    ASSERT_EQ(corr[size_t(j)], 8 * s) << "row " << j;
  }
  PackedView v8 = p.view();
  v8.dtype = npu::Dtype::kI8;
  EXPECT_THROW(int4_split_corrections(v8), Error);
}

TEST(PackedInt4, ThePlanCountsInt4BytesInSlicesOf64Rows) {
  testing::TempDir dir;
  const auto m = model_with_k(dir, 96);
  npu::Capabilities caps;
  caps.window_bytes = uint64_t(64) << 20;
  caps.domains = 1;
  caps.cores = 3;
  PlanOptions o;
  const Plan p8 = make_plan(m->weights(), caps, o);
  o.wtype = npu::Dtype::kI4;
  const Plan p4 = make_plan(m->weights(), caps, o);
  EXPECT_EQ(p4.wtype, npu::Dtype::kI4);
  uint64_t want = 0;
  for (const model::Linear* l : m->weights().linears()) want += npu::packed_weight_bytes_i4(l->n, l->k);
  EXPECT_EQ(p4.weight_bytes(), want);
  EXPECT_LT(p4.weight_bytes(), p8.weight_bytes());
  // Streamed through a small budget: slices of 64-row multiples, the last ending at N.
  o.residency = Residency::kStream;
  o.budget_bytes = 64 << 10;
  const Plan ps = make_plan(m->weights(), caps, o);
  for (const WeightPlan& w : ps.weights) {
    ASSERT_FALSE(w.slices.empty());
    EXPECT_EQ(w.slices.back().n1, w.linear->n);
    for (const Slice& s : w.slices) {
      EXPECT_EQ(s.n0 % 64, 0);
      EXPECT_EQ(s.bytes, npu::packed_weight_bytes_i4(s.n1 - s.n0, w.linear->k));
    }
  }
  o.wtype = npu::Dtype::kF16;
  EXPECT_THROW(make_plan(m->weights(), caps, o), Error);
}

}  // namespace
}  // namespace ork::weights
