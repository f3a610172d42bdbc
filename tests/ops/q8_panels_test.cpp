// Q8Panels: the layout round-trips to the GGUF bytes; every ISA's panel kernel equals the scalar
// reference bit for bit; the reference equals the exact quantized product within two f32 roundings
// per block; results do not depend on threads, M or the source's alignment.
#include "ops/q8_panels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "ops/reference.h"
#include "quant/blocks.h"

namespace ork::ops {
namespace {

using testing::bit_equal;
using testing::make_weight;
using testing::random_floats;

const int64_t kNs[] = {1, 15, 16, 17, 32, 33, 47, 64, 100};
const int64_t kKs[] = {32, 64, 96, 256, 1024};

TEST(Q8Panels, PackUnpackRoundTripsFromAnyAlignment) {
  for (int64_t n : kNs)
    for (int64_t k : kKs)
      for (size_t offset : {size_t(0), size_t(1), size_t(3)}) {
        std::vector<uint8_t> w;
        std::vector<float> dec;
        make_weight(quant::Type::Q8_0, n, k, uint32_t(n * 7 + k), w, dec);
        std::vector<uint8_t> shifted(w.size() + offset);
        std::memcpy(shifted.data() + offset, w.data(), w.size());
        const Q8Panels p = Q8Panels::pack(shifted.data() + offset, n, k);
        EXPECT_EQ(p.panels(), (n + 15) / 16);
        EXPECT_EQ(p.panel_bytes() % 64, 0);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p.panel(0)) % 64, 0u);
        std::vector<uint8_t> back(w.size(), 0xcd);
        p.unpack(back.data());
        EXPECT_EQ(back, w) << "N=" << n << " K=" << k << " offset=" << offset;
      }
}

TEST(Q8Panels, LayoutInterleavesFourQuantsOfSixteenRows) {
  const int64_t n = 17, k = 64;
  std::vector<uint8_t> w;
  std::vector<float> dec;
  make_weight(quant::Type::Q8_0, n, k, 5, w, dec);
  const Q8Panels p = Q8Panels::pack(w.data(), n, k);
  const auto* blocks = reinterpret_cast<const quant::BlockQ8_0*>(w.data());
  // Row 3, block 1, quant 13 = group 3, element 1.
  const uint8_t* u = p.panel(0) + p.scale_bytes() + 1 * 8 * kPanelGroupBytes;
  EXPECT_EQ(int8_t(u[3 * kPanelGroupBytes + 3 * 4 + 1] ^ 0x80), blocks[3 * 2 + 1].qs[13]);
  uint16_t d;
  std::memcpy(&d, p.panel(0) + (1 * kPanelRows + 3) * 2, 2);
  EXPECT_EQ(d, blocks[3 * 2 + 1].d);
  // Row 16 is row 0 of panel 1; its rows 1..15 are padding: scale 0, quants 0 (stored as 0x80).
  std::memcpy(&d, p.panel(1) + (0 * kPanelRows + 5) * 2, 2);
  EXPECT_EQ(d, 0);
  EXPECT_EQ(p.panel(1)[p.scale_bytes() + 5 * 4], 0x80);
}

// Y by the scalar kernel, and by the exact formula on the quantized activations in double.
TEST(Q8Panels, ReferenceKernelWithinTwoRoundingsPerBlock) {
  ThreadPool pool(2);
  for (int64_t n : {1, 17, 40})
    for (int64_t k : {32, 96, 1024}) {
      const int64_t m = 5;
      std::vector<uint8_t> w;
      std::vector<float> dec;
      make_weight(quant::Type::Q8_0, n, k, uint32_t(n + k), w, dec);
      const std::vector<float> x = random_floats(size_t(m * k), 11, -3.0f, 3.0f);
      const Q8Panels p = Q8Panels::pack(w.data(), n, k);
      std::vector<float> y(size_t(m * n));
      matmul_q8_panels(pool, x.data(), m, p, y.data(), Isa::kScalar);
      const int64_t nb = k / 32;
      std::vector<BlockQ8A> xq(static_cast<size_t>(nb));
      const auto* wb = reinterpret_cast<const quant::BlockQ8_0*>(w.data());
      for (int64_t i = 0; i < m; ++i) {
        quantize_row_q8a(x.data() + i * k, k, xq.data());
        for (int64_t j = 0; j < n; ++j) {
          double exact = 0.0, mag = 0.0;
          for (int64_t b = 0; b < nb; ++b) {
            int64_t dot = 0;
            for (int e = 0; e < 32; ++e) dot += int64_t(wb[j * nb + b].qs[e]) * xq[size_t(b)].qs[e];
            const double term = double(f16_to_f32(wb[j * nb + b].d)) * xq[size_t(b)].d * double(dot);
            exact += term;
            mag += std::fabs(term) + std::fabs(exact);
          }
          const double tol = 2.0 * std::ldexp(1.0, -23) * mag + 1e-30;
          EXPECT_NEAR(y[size_t(i * n + j)], exact, tol) << "N=" << n << " K=" << k << " i=" << i << " j=" << j;
        }
      }
    }
}

TEST(Q8Panels, EveryIsaKernelEqualsTheReferenceBitForBit) {
  ThreadPool pool(3);
  for (Isa isa : supported_isas()) {
    if (q8_panel_kernel(isa) == nullptr || isa == Isa::kScalar) continue;
    for (int64_t n : kNs)
      for (int64_t k : {32, 96, 1024})
        for (int64_t m : {1, 2, 3, 4, 5, 9, 33}) {
          std::vector<uint8_t> w;
          std::vector<float> dec;
          make_weight(quant::Type::Q8_0, n, k, uint32_t(3 * n + k), w, dec);
          const std::vector<float> x = random_floats(size_t(m * k), uint32_t(m), -2.0f, 2.0f);
          const Q8Panels p = Q8Panels::pack(w.data(), n, k, &pool);
          std::vector<float> ref(size_t(m * n), -1.0f), got(size_t(m * n), -2.0f);
          matmul_q8_panels(pool, x.data(), m, p, ref.data(), Isa::kScalar);
          matmul_q8_panels(pool, x.data(), m, p, got.data(), isa);
          EXPECT_TRUE(bit_equal(ref, got)) << isa_name(isa) << " N=" << n << " K=" << k << " M=" << m;
        }
  }
}

TEST(Q8Panels, ThreadCountAndBatchIndependent) {
  ThreadPool one(1), three(3);
  const int64_t n = 70, k = 256, m = 37;
  std::vector<uint8_t> w;
  std::vector<float> dec;
  make_weight(quant::Type::Q8_0, n, k, 9, w, dec);
  const std::vector<float> x = random_floats(size_t(m * k), 4, -1.0f, 1.0f);
  const Q8Panels p = Q8Panels::pack(w.data(), n, k);
  std::vector<float> a(static_cast<size_t>(m * n)), b(a.size()), row(static_cast<size_t>(n));
  matmul_q8_panels(one, x.data(), m, p, a.data());
  matmul_q8_panels(three, x.data(), m, p, b.data());
  EXPECT_TRUE(bit_equal(a, b));
  for (int64_t i = 0; i < m; ++i) {
    matmul_q8_panels(three, x.data() + i * k, 1, p, row.data());
    EXPECT_EQ(0, std::memcmp(row.data(), a.data() + i * n, size_t(n) * sizeof(float))) << "row " << i;
  }
}

TEST(Q8Panels, DoesNotWritePastTheLastColumn) {
  ThreadPool pool(2);
  const int64_t n = 19, k = 64, m = 3;
  std::vector<uint8_t> w;
  std::vector<float> dec;
  make_weight(quant::Type::Q8_0, n, k, 2, w, dec);
  const std::vector<float> x = random_floats(size_t(m * k), 8);
  const Q8Panels p = Q8Panels::pack(w.data(), n, k);
  std::vector<float> y(size_t(m * n + 16), 7.0f);
  matmul_q8_panels(pool, x.data(), m, p, y.data());
  for (size_t i = size_t(m * n); i < y.size(); ++i) EXPECT_EQ(y[i], 7.0f);
}

TEST(Q8Panels, BadShapesThrow) {
  std::vector<uint8_t> w(34 * 4, 0);
  EXPECT_THROW(Q8Panels::pack(w.data(), 1, 33), Error);
  EXPECT_THROW(Q8Panels::pack(w.data(), 0, 32), Error);
  EXPECT_THROW(Q8Panels::pack(w.data(), 1, 0), Error);
  ThreadPool pool(1);
  const Q8Panels p = Q8Panels::pack(w.data(), 4, 32);
  float x[32] = {}, y[4];
  EXPECT_THROW(matmul_q8_panels(pool, x, -1, p, y), Error);
  EXPECT_THROW(matmul_q8_panels(pool, x, 1, p, y, Isa::kAvx2), Error);
}

}  // namespace
}  // namespace ork::ops
