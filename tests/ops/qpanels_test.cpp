// QPanels (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS): the layout round-trips to the GGUF bytes; every ISA's panel kernel equals
// the scalar reference bit for bit; the reference equals the exact quantized product within two f32
// roundings per block; results do not depend on threads, M or the source's alignment.
#include "ops/qpanels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/huge_page_arena.h"
#include "core/fp16.h"
#include "ops/qpanels_two_tiles.h"
#include "ops/reference.h"
#include "quant/blocks.h"

namespace ork::ops {
namespace {

using testing::bit_equal;
using testing::make_weight;
using testing::random_floats;

const int64_t kNs[] = {1, 15, 16, 17, 32, 33, 47, 64, 100};
const int64_t kKs[] = {32, 64, 96, 256, 1024};

class QPanelsP : public ::testing::TestWithParam<quant::Type> {};

TEST_P(QPanelsP, PackUnpackRoundTripsFromAnyAlignment) {
  const quant::Type type = GetParam();
  const int64_t block = quant::traits(type).block_size;
  for (int64_t n : kNs)
    for (int64_t k : kKs)
      for (size_t offset : {size_t(0), size_t(1), size_t(3)}) {
        if (k % block != 0) continue;
        std::vector<uint8_t> w;
        std::vector<float> dec;
        make_weight(type, n, k, uint32_t(n * 7 + k), w, dec);
        std::vector<uint8_t> shifted(w.size() + offset);
        std::memcpy(shifted.data() + offset, w.data(), w.size());
        const QPanels p = QPanels::pack(type, shifted.data() + offset, n, k);
        EXPECT_EQ(p.panels(), (n + 15) / 16);
        EXPECT_EQ(p.panel_bytes() % 64, 0);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p.panel(0)) % 64, 0u);
        std::vector<uint8_t> back(w.size(), 0xcd);
        p.unpack(back.data());
        EXPECT_EQ(back, w) << "N=" << n << " K=" << k << " offset=" << offset;
      }
}

TEST(QPanels, Q8_0LayoutInterleavesFourQuantsOfSixteenRowsInPanelPairs) {
  const int64_t n = 17, k = 64;
  std::vector<uint8_t> w;
  std::vector<float> dec;
  make_weight(quant::Type::Q8_0, n, k, 5, w, dec);
  const QPanels p = QPanels::pack(quant::Type::Q8_0, w.data(), n, k);
  const auto* blocks = reinterpret_cast<const quant::BlockQ8_0*>(w.data());
  const uint8_t* pair = p.panel(0);
  EXPECT_EQ(kQ8_0Pairs.block(), 2 * (32 + 512));
  EXPECT_EQ(kQ8_0Pairs.quants(pair, 1, 1), pair + 1088 + 64 + 512);
  // Row 3, block 1, quant 13 = group 3, element 1.
  const uint8_t* u = kQ8_0Pairs.quants(pair, 1, 0);
  EXPECT_EQ(int8_t(u[3 * kPanelGroupBytes + 3 * 4 + 1] ^ 0x80), blocks[3 * 2 + 1].qs[13]);
  uint16_t d;
  std::memcpy(&d, kQ8_0Pairs.scales(pair, 1, 0) + 3 * 2, 2);
  EXPECT_EQ(d, blocks[3 * 2 + 1].d);
  // Row 16 is row 0 of panel 1, the pair's second; its rows 1..15 are padding: scale 0, quants 0
  // (stored as 0x80).
  std::memcpy(&d, kQ8_0Pairs.scales(pair, 0, 1) + 0 * 2, 2);
  EXPECT_EQ(d, blocks[16 * 2 + 0].d);
  std::memcpy(&d, kQ8_0Pairs.scales(pair, 0, 1) + 5 * 2, 2);
  EXPECT_EQ(d, 0);
  EXPECT_EQ(kQ8_0Pairs.quants(pair, 0, 1)[5 * 4], 0x80);
}

TEST(QPanels, Q6_KBlocksAlternateInPanelPairs) {
  const int64_t n = 20, k = 512;  // panels 0 and 1 (rows 16..19), one pair of two super-blocks
  std::vector<uint8_t> w;
  std::vector<float> dec;
  make_weight(quant::Type::Q6_K, n, k, 8, w, dec);
  const QPanels p = QPanels::pack(quant::Type::Q6_K, w.data(), n, k);
  EXPECT_EQ(kQ6_KPairs.block(), 2 * (288 + 3072));
  const uint8_t* pair = p.panel(0);
  EXPECT_EQ(kQ6_KPairs.scales(pair, 1, 1), pair + 6720 + 288);
  EXPECT_EQ(kQ6_KPairs.quants(pair, 1, 0), pair + 6720 + 576);
  EXPECT_EQ(kQ6_KPairs.quants(pair, 1, 1), pair + 6720 + 576 + 3072);
  const auto* blocks = reinterpret_cast<const quant::BlockQ6_K*>(w.data());
  // Row 17 = row 1 of panel 1: its d of super-block 1, and its sub-block 5 scale.
  uint16_t d;
  std::memcpy(&d, kQ6_KPairs.scales(pair, 1, 1) + 2 * 1, 2);
  EXPECT_EQ(d, blocks[17 * 2 + 1].d);
  EXPECT_EQ(int8_t(kQ6_KPairs.scales(pair, 1, 1)[32 + 16 * 5 + 1]), blocks[17 * 2 + 1].scales[5]);
  // Row 17, super-block 0, ql byte 6 = ql group 1, element 2 (row 1).
  EXPECT_EQ(kQ6_KPairs.quants(pair, 0, 1)[1 * kPanelGroupBytes + 1 * 4 + 2], blocks[17 * 2 + 0].ql[6]);
}

// The offset m (fp16 at byte 2 of a Q4_1 / Q5_1 block) of element e of row j of GGUF bytes w.
double block_offset(const std::vector<uint8_t>& w, quant::Type type, int64_t j, int64_t k, int64_t e) {
  const int64_t bb = quant::traits(type).type_size, nb = k / 32;
  uint16_t m;
  std::memcpy(&m, w.data() + (j * nb + e / 32) * bb + 2, 2);
  return double(f16_to_f32(m));
}

// Y by the scalar kernel, and the exact product of the decoded weights and the quantized
// activations (BlockQ8A, or Q8_K for Q4_K) in double. The bound: four f32 roundings of the
// magnitude Σ|w·x| (block scales, conversions and the fused multiply-adds).
TEST_P(QPanelsP, ReferenceKernelWithinRoundingOfTheExactProduct) {
  const quant::Type type = GetParam();
  const bool k_quant = quant::traits(type).block_size == 256;
  const bool offset = type == quant::Type::Q4_1 || type == quant::Type::Q5_1;
  ThreadPool pool(2);
  for (int64_t n : {1, 17, 40})
    for (int64_t k : {32, 96, 256, 1024}) {
      if (k % quant::traits(type).block_size != 0) continue;
      const int64_t m = 5;
      std::vector<uint8_t> w;
      std::vector<float> dec;
      make_weight(type, n, k, uint32_t(n + k), w, dec);
      const std::vector<float> x = random_floats(size_t(m * k), 11, -3.0f, 3.0f);
      const QPanels p = QPanels::pack(type, w.data(), n, k);
      std::vector<float> y(size_t(m * n));
      matmul_qpanels(pool, x.data(), m, p, y.data(), Isa::kScalar);
      std::vector<double> xq(static_cast<size_t>(k));  // the activations as the kernel sees them
      for (int64_t i = 0; i < m; ++i) {
        if (k_quant) {
          std::vector<quant::BlockQ8_K> b(static_cast<size_t>(k / 256));
          quantize_row_q8k(x.data() + i * k, k, b.data());
          for (int64_t e = 0; e < k; ++e) xq[size_t(e)] = double(b[size_t(e / 256)].d) * b[size_t(e / 256)].qs[e % 256];
        } else {
          std::vector<BlockQ8A> b(static_cast<size_t>(k / 32));
          quantize_row_q8a(x.data() + i * k, k, b.data());
          for (int64_t e = 0; e < k; ++e) xq[size_t(e)] = double(b[size_t(e / 32)].d) * b[size_t(e / 32)].qs[e % 32];
        }
        for (int64_t j = 0; j < n; ++j) {
          double exact = 0.0, mag = 0.0;
          for (int64_t e = 0; e < k; ++e) {
            const double t = double(dec[size_t(j * k + e)]) * xq[size_t(e)];
            exact += t;
            mag += std::fabs(t);
            // Q4_1 / Q5_1 round d·q·x and m·x separately (w = d·q + m may cancel): both magnitudes.
            if (offset) mag += 2.0 * std::fabs(block_offset(w, type, j, k, e) * xq[size_t(e)]);
          }
          const double tol = 4.0 * std::ldexp(1.0, -23) * mag + 1e-30;
          EXPECT_NEAR(y[size_t(i * n + j)], exact, tol) << "N=" << n << " K=" << k << " i=" << i << " j=" << j;
        }
      }
    }
}

TEST_P(QPanelsP, PackedIntoAnArenaEqualsItsOwnCopy) {
  const quant::Type type = GetParam();
  const int64_t k = quant::traits(type).block_size == 256 ? 512 : 96;
  ThreadPool pool(2);
  HugePageArena arena(QPanels::packed_bytes(type, 17, k) + QPanels::packed_bytes(type, 40, k) + 64);
  for (int64_t n : {17, 40}) {
    std::vector<uint8_t> w;
    std::vector<float> dec;
    make_weight(type, n, k, uint32_t(n + k), w, dec);
    const size_t before = arena.used();
    const QPanels own = QPanels::pack(type, w.data(), n, k, &pool);
    const QPanels in = QPanels::pack(type, w.data(), n, k, &pool, &arena);
    EXPECT_EQ(QPanels::packed_bytes(type, n, k), own.bytes());
    ASSERT_EQ(in.bytes(), own.bytes());
    EXPECT_EQ(in.panel(0), arena.data() + (before + 63) / 64 * 64);  // its slice, after the last one
    EXPECT_EQ(std::memcmp(in.panel(0), own.panel(0), own.bytes()), 0);
    const std::vector<float> x = random_floats(size_t(3 * k), 5, -2.0f, 2.0f);
    std::vector<float> a(size_t(3 * n)), b(size_t(3 * n));
    matmul_qpanels(pool, x.data(), 3, own, a.data());
    matmul_qpanels(pool, x.data(), 3, in, b.data());
    EXPECT_TRUE(bit_equal(a, b)) << "N=" << n;
  }
  EXPECT_THROW(QPanels::packed_bytes(type, 0, k), Error);
  EXPECT_THROW(QPanels::pack(type, nullptr, 1 << 20, k, nullptr, &arena), Error);  // past its capacity
}

TEST_P(QPanelsP, EveryIsaKernelEqualsTheReferenceBitForBit) {
  const quant::Type type = GetParam();
  ThreadPool pool(3);
  int isas = 0;
  for (Isa isa : supported_isas()) {
    if (panel_kernel(type, isa) == nullptr || isa == Isa::kScalar) continue;
    ++isas;
    for (int64_t n : kNs)
      for (int64_t k : {32, 96, 256, 1024})
        for (int64_t m : {1, 2, 3, 4, 5, 9, 33}) {
          if (k % quant::traits(type).block_size != 0) continue;
          std::vector<uint8_t> w;
          std::vector<float> dec;
          make_weight(type, n, k, uint32_t(3 * n + k), w, dec);
          const std::vector<float> x = random_floats(size_t(m * k), uint32_t(m), -2.0f, 2.0f);
          const QPanels p = QPanels::pack(type, w.data(), n, k, &pool);
          std::vector<float> ref(size_t(m * n), -1.0f), got(size_t(m * n), -2.0f);
          matmul_qpanels(pool, x.data(), m, p, ref.data(), Isa::kScalar);
          matmul_qpanels(pool, x.data(), m, p, got.data(), isa);
          EXPECT_TRUE(bit_equal(ref, got)) << isa_name(isa) << " N=" << n << " K=" << k << " M=" << m;
        }
  }
  // The vector kernel of this build's target runs whenever its CPU feature is there; every panel
  // type has an AVX2, an AVX-512 VNNI and a NEON kernel.
  if (isa_supported(Isa::kAvx512Vnni) || isa_supported(Isa::kNeonDot) || isa_supported(Isa::kAvx2)) {
    EXPECT_GE(isas, 1);
  }
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512Vnni, Isa::kNeonDot}) {
    if (isa_supported(isa)) {
      EXPECT_NE(panel_kernel(type, isa), nullptr) << isa_name(isa);
    }
  }
}

TEST_P(QPanelsP, ThreadCountAndBatchIndependent) {
  const quant::Type type = GetParam();
  ThreadPool one(1), three(3);
  const int64_t n = 70, k = 256, m = 37;
  std::vector<uint8_t> w;
  std::vector<float> dec;
  make_weight(type, n, k, 9, w, dec);
  const std::vector<float> x = random_floats(size_t(m * k), 4, -1.0f, 1.0f);
  const QPanels p = QPanels::pack(type, w.data(), n, k);
  std::vector<float> a(static_cast<size_t>(m * n)), b(a.size()), row(static_cast<size_t>(n));
  matmul_qpanels(one, x.data(), m, p, a.data());
  matmul_qpanels(three, x.data(), m, p, b.data());
  EXPECT_TRUE(bit_equal(a, b));
  for (int64_t i = 0; i < m; ++i) {
    matmul_qpanels(three, x.data() + i * k, 1, p, row.data());
    EXPECT_EQ(0, std::memcmp(row.data(), a.data() + i * n, size_t(n) * sizeof(float))) << "row " << i;
  }
}

TEST_P(QPanelsP, DoesNotWritePastTheLastColumn) {
  const quant::Type type = GetParam();
  ThreadPool pool(2);
  const int64_t n = 19, k = 256, m = 3;
  std::vector<uint8_t> w;
  std::vector<float> dec;
  make_weight(type, n, k, 2, w, dec);
  const std::vector<float> x = random_floats(size_t(m * k), 8);
  const QPanels p = QPanels::pack(type, w.data(), n, k);
  std::vector<float> y(size_t(m * n + 16), 7.0f);
  matmul_qpanels(pool, x.data(), m, p, y.data());
  for (size_t i = size_t(m * n); i < y.size(); ++i) EXPECT_EQ(y[i], 7.0f);
}

TEST(QPanels, Q4_0LayoutKeepsTheGgufNibblePairsInPanelPairs) {
  const int64_t n = 20, k = 64;  // panels 0 and 1 (rows 16..19), one pair
  std::vector<uint8_t> w;
  std::vector<float> dec;
  make_weight(quant::Type::Q4_0, n, k, 6, w, dec);
  const QPanels p = QPanels::pack(quant::Type::Q4_0, w.data(), n, k);
  EXPECT_EQ(p.block_bytes(), 256);
  EXPECT_EQ(kQ4_0Pairs.block(), 576);
  const auto* blocks = reinterpret_cast<const quant::BlockQ4_0*>(w.data());
  const uint8_t* pair = p.panel(0);
  // Block 1 of the pair starts 576 bytes in: panel 0's d[16], panel 1's, panel 0's quants, panel 1's.
  EXPECT_EQ(kQ4_0Pairs.scales(pair, 1, 0), pair + 576);
  EXPECT_EQ(kQ4_0Pairs.scales(pair, 1, 1), pair + 576 + 32);
  EXPECT_EQ(kQ4_0Pairs.quants(pair, 1, 0), pair + 576 + 64);
  EXPECT_EQ(kQ4_0Pairs.quants(pair, 1, 1), pair + 576 + 64 + 256);
  // Row 2, block 1, GGUF byte 9 (elements 9 and 25) = group 2, element 1; its scale d.
  EXPECT_EQ(kQ4_0Pairs.quants(pair, 1, 0)[2 * kPanelGroupBytes + 2 * 4 + 1], blocks[2 * 2 + 1].qs[9]);
  uint16_t d;
  std::memcpy(&d, kQ4_0Pairs.scales(pair, 1, 0) + 2 * 2, 2);
  EXPECT_EQ(d, blocks[2 * 2 + 1].d);
  // Row 17 = row 1 of panel 1, block 0, GGUF byte 3 = group 0, element 3.
  EXPECT_EQ(kQ4_0Pairs.quants(pair, 0, 1)[0 * kPanelGroupBytes + 1 * 4 + 3], blocks[17 * 2 + 0].qs[3]);
  std::memcpy(&d, kQ4_0Pairs.scales(pair, 0, 1) + 1 * 2, 2);
  EXPECT_EQ(d, blocks[17 * 2 + 0].d);
  // Padding row 5 of panel 1 (row 21): nibbles 8 (weight 0), scale 0.
  EXPECT_EQ(kQ4_0Pairs.quants(pair, 0, 1)[5 * 4], 0x88);
  std::memcpy(&d, kQ4_0Pairs.scales(pair, 0, 1) + 5 * 2, 2);
  EXPECT_EQ(d, 0);
  // Whole pairs: an odd panel count keeps its last panel's partner.
  const QPanels odd = QPanels::pack(quant::Type::Q4_0, w.data(), 3, k);
  EXPECT_EQ(odd.panels(), 1);
  EXPECT_EQ(odd.bytes(), size_t(2 * odd.panel_bytes()));
}

// The largest integer sums the K-type kernels form: every quant at its maximum (Q2_K 3 with 4-bit
// scales and mins 15, Q3_K 7 (weight 3) with scales 31 / −32 by row, Q4_K nibbles 15 and
// Q5_K values 31 with 6-bit scales and mins 63; Q6_K values 63 with int8 scales ±127 / −128) against activations all
// ±127. The AVX2 kernels sum vpmaddubsw pairs in int16 (30480, 31496, 32004 here, below 2^15): a
// saturation or an overflow would change these outputs. Checked against the integer formula too.
TEST(QPanels, KTypeKernelsAreExactAtTheLargestSums) {
  const int64_t n = 20, k = 512, nb = k / 256;
  ThreadPool pool(2);
  for (quant::Type type : {quant::Type::Q2_K, quant::Type::Q3_K, quant::Type::Q4_K, quant::Type::Q5_K,
                           quant::Type::Q6_K})
    for (float xv : {1.0f, -1.0f}) {
      const int64_t bb = quant::traits(type).type_size;
      std::vector<uint8_t> w(size_t(n * nb * bb));
      for (int64_t r = 0; r < n; ++r)
        for (int64_t b = 0; b < nb; ++b) {
          uint8_t* blk = w.data() + (r * nb + b) * bb;
          if (type == quant::Type::Q2_K) {  // scales, mins 15; q 3; d, dmin = 1.0
            std::memset(blk, 0xff, 80);
            blk[80] = 0x00, blk[81] = 0x3c, blk[82] = 0x00, blk[83] = 0x3c;
          } else if (type == quant::Type::Q3_K) {  // hmask, qs all ones (q = 7); scales 63 or 0 by row
            std::memset(blk, 0xff, 96);
            std::memset(blk + 96, r % 2 ? 0x00 : 0xff, 12);
            blk[108] = 0x00, blk[109] = 0x3c;
          } else if (type != quant::Type::Q6_K) {  // d, dmin = 1.0 (f16 0x3c00); scales, mins 63; q 15 or 31
            blk[0] = 0x00, blk[1] = 0x3c, blk[2] = 0x00, blk[3] = 0x3c;
            std::memset(blk + 4, 0xff, size_t(bb - 4));
          } else {  // ql, qh all ones (q = 63), scales 127 or −128 by row, d = 1.0
            std::memset(blk, 0xff, 192);
            std::memset(blk + 192, r % 2 ? 0x80 : 0x7f, 16);
            blk[208] = 0x00, blk[209] = 0x3c;
          }
        }
      const QPanels p = QPanels::pack(type, w.data(), n, k);
      const std::vector<float> x(size_t(2 * k), xv);
      std::vector<float> ref(size_t(2 * n));
      matmul_qpanels(pool, x.data(), 2, p, ref.data(), Isa::kScalar);
      // The activations quantize to ±127 with d_x = 1/127 (f32), so per super-block and row:
      const double dx = double(1.0f / 127.0f), q = xv > 0 ? 127.0 : -127.0;
      for (int64_t r = 0; r < n; ++r) {
        const double qmax = type == quant::Type::Q4_K ? 15 : 31;
        const double per_block = type == quant::Type::Q2_K ? 16 * 15 * (16 * 3 * q) - 16 * 15 * (16 * q)
                                 : type == quant::Type::Q3_K ? 16 * (r % 2 ? -32.0 : 31.0) * (16 * 7 * q - 4 * 16 * q)
                                 : type != quant::Type::Q6_K
                                     ? 8 * 63 * (32 * qmax * q) - 8 * 63 * (32 * q)
                                     : 16 * (r % 2 ? -128.0 : 127.0) * (16 * 63 * q - 32 * 16 * q);
        EXPECT_NEAR(ref[size_t(r)], double(nb) * dx * per_block, 1e-6 * std::fabs(double(nb) * dx * per_block))
            << quant::traits(type).name << " row " << r;
      }
      for (Isa isa : supported_isas()) {
        if (isa == Isa::kScalar || panel_kernel(type, isa) == nullptr) continue;
        std::vector<float> got(ref.size(), -3.0f);
        matmul_qpanels(pool, x.data(), 2, p, got.data(), isa);
        EXPECT_TRUE(bit_equal(ref, got)) << isa_name(isa) << " " << quant::traits(type).name << " x=" << xv;
      }
    }
}

// IQ4: every index 0 (grid value −127) against activations ±127, the largest |w·x| pair sums
// (2·127·127 = 32258 in one vpmaddubsw lane), with IQ4_XS sub-block scales at both ends (−32, 31).
TEST(QPanels, IQ4KernelsAreExactAtTheLargestProducts) {
  const int64_t n = 20, k = 512;
  ThreadPool pool(2);
  for (quant::Type type : {quant::Type::IQ4_NL, quant::Type::IQ4_XS})
    for (float xv : {1.0f, -1.0f}) {
      const int64_t bs = quant::traits(type).block_size, bb = quant::traits(type).type_size, nb = k / bs;
      std::vector<uint8_t> w(size_t(n * nb * bb), 0);
      for (int64_t r = 0; r < n; ++r)
        for (int64_t b = 0; b < nb; ++b) {
          uint8_t* blk = w.data() + (r * nb + b) * bb;
          blk[0] = 0x00, blk[1] = 0x3c;  // d = 1.0
          if (type == quant::Type::IQ4_XS) {  // ls = 0 (l = −32) on even rows, 63 (l = 31) on odd rows
            const uint8_t v = r % 2 ? 0xff : 0x00;
            blk[2] = blk[3] = blk[4] = blk[5] = blk[6] = blk[7] = v;
          }
        }
      const QPanels p = QPanels::pack(type, w.data(), n, k);
      const std::vector<float> x(size_t(2 * k), xv);
      std::vector<float> ref(size_t(2 * n));
      matmul_qpanels(pool, x.data(), 2, p, ref.data(), Isa::kScalar);
      const double dx = double(1.0f / 127.0f), q = xv > 0 ? 127.0 : -127.0;
      for (int64_t r = 0; r < n; ++r) {
        const double l = type == quant::Type::IQ4_NL ? 1.0 : (r % 2 ? 31.0 : -32.0);
        const double want = double(k) * dx * l * (-127.0 * q);
        EXPECT_NEAR(ref[size_t(r)], want, 1e-6 * std::fabs(want)) << quant::traits(type).name << " row " << r;
      }
      for (Isa isa : supported_isas()) {
        if (isa == Isa::kScalar || panel_kernel(type, isa) == nullptr) continue;
        std::vector<float> got(ref.size(), -3.0f);
        matmul_qpanels(pool, x.data(), 2, p, got.data(), isa);
        EXPECT_TRUE(bit_equal(ref, got)) << isa_name(isa) << " " << quant::traits(type).name << " x=" << xv;
      }
    }
}

// Q4_0 / Q4_1 / Q5_0 / Q5_1 at their largest products: every q at 15 or 31 (Q4_0, Q5_0: q = 0, the
// weight −8 or −16, on odd rows) against activations all ±127 — vpmaddubsw lanes of 2·31·127 = 7874,
// the AVX2 kernel's int16 sum of a low and a high nibble group 15748. Bit for bit on every ISA, and
// the reference against the formula.
TEST(QPanels, LegacyKernelsAreExactAtTheLargestProducts) {
  const int64_t n = 20, k = 512, nb = k / 32;
  ThreadPool pool(2);
  for (quant::Type type : {quant::Type::Q4_0, quant::Type::Q4_1, quant::Type::Q5_0, quant::Type::Q5_1})
    for (float xv : {1.0f, -1.0f}) {
      const int64_t bb = quant::traits(type).type_size;
      const bool zero_point = type == quant::Type::Q4_0 || type == quant::Type::Q5_0;
      const bool offset = !zero_point;
      std::vector<uint8_t> w(size_t(n * nb * bb));
      for (int64_t r = 0; r < n; ++r)
        for (int64_t b = 0; b < nb; ++b) {
          uint8_t* blk = w.data() + (r * nb + b) * bb;
          const uint8_t q = zero_point && r % 2 ? 0x00 : 0xff;
          std::memset(blk, q, size_t(bb));
          blk[0] = 0x00, blk[1] = 0x3c;                      // d = 1.0
          if (offset) blk[2] = 0x00, blk[3] = r % 2 ? 0xbc : 0x3c;  // m = ±1.0
        }
      const QPanels p = QPanels::pack(type, w.data(), n, k);
      const std::vector<float> x(size_t(2 * k), xv);
      std::vector<float> ref(size_t(2 * n));
      matmul_qpanels(pool, x.data(), 2, p, ref.data(), Isa::kScalar);
      const double dx = double(1.0f / 127.0f), q = xv > 0 ? 127.0 : -127.0;
      for (int64_t r = 0; r < n; ++r) {
        const bool q4 = type == quant::Type::Q4_0 || type == quant::Type::Q4_1;
        const double qmax = q4 ? 15.0 : 31.0, zero = q4 ? 8.0 : 16.0;
        const double wv = zero_point ? (r % 2 ? -zero : qmax - zero) : qmax + (r % 2 ? -1.0 : 1.0);
        const double want = double(k) * dx * wv * q;
        EXPECT_NEAR(ref[size_t(r)], want, 1e-6 * std::fabs(want)) << quant::traits(type).name << " row " << r;
      }
      for (Isa isa : supported_isas()) {
        if (isa == Isa::kScalar || panel_kernel(type, isa) == nullptr) continue;
        std::vector<float> got(ref.size(), -3.0f);
        matmul_qpanels(pool, x.data(), 2, p, got.data(), isa);
        EXPECT_TRUE(bit_equal(ref, got)) << isa_name(isa) << " " << quant::traits(type).name << " x=" << xv;
      }
    }
}

// Q8_0 at its largest products: quants −128 (even rows) and 127 (odd rows, the rest of each block)
// against activations all ±127 — the AVX2 kernel's vpmaddubsw lanes of 2·128·127 = 32512, one below
// saturation. Bit for bit on every ISA, and the reference against the formula.
TEST(QPanels, Q8_0KernelsAreExactAtTheLargestProducts) {
  const int64_t n = 20, k = 512, nb = k / 32, bb = 34;
  ThreadPool pool(2);
  for (float xv : {1.0f, -1.0f}) {
    std::vector<uint8_t> w(size_t(n * nb * bb));
    for (int64_t r = 0; r < n; ++r)
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* blk = w.data() + (r * nb + b) * bb;
        std::memset(blk + 2, r % 2 ? 0x7f : 0x80, 32);
        blk[0] = 0x00, blk[1] = 0x3c;  // d = 1.0
      }
    const QPanels p = QPanels::pack(quant::Type::Q8_0, w.data(), n, k);
    const std::vector<float> x(size_t(2 * k), xv);
    std::vector<float> ref(size_t(2 * n));
    matmul_qpanels(pool, x.data(), 2, p, ref.data(), Isa::kScalar);
    const double dx = double(1.0f / 127.0f), q = xv > 0 ? 127.0 : -127.0;
    for (int64_t r = 0; r < n; ++r) {
      const double want = double(k) * dx * (r % 2 ? 127.0 : -128.0) * q;
      EXPECT_NEAR(ref[size_t(r)], want, 1e-6 * std::fabs(want)) << "row " << r;
    }
    int isas = 0;
    for (Isa isa : supported_isas()) {
      if (isa == Isa::kScalar || panel_kernel(quant::Type::Q8_0, isa) == nullptr) continue;
      ++isas;
      std::vector<float> got(ref.size(), -3.0f);
      matmul_qpanels(pool, x.data(), 2, p, got.data(), isa);
      EXPECT_TRUE(bit_equal(ref, got)) << isa_name(isa) << " x=" << xv;
    }
    if (isa_supported(Isa::kAvx2) || isa_supported(Isa::kNeonDot)) {
      EXPECT_GE(isas, 1);
    }
  }
}

// A group of weights sharing X (a mix's Q4_K Q/K beside its Q6_K V; Q8_0 beside Q4_0 and IQ4_NL)
// gives each weight exactly what matmul_qpanels gives it alone, at decode and prefill M, on any
// thread count; weights that cannot share X are refused by name.
TEST(QPanels, GroupEqualsEachWeightAlone) {
  const std::vector<std::vector<quant::Type>> groups = {
      {quant::Type::Q4_K, quant::Type::Q4_K, quant::Type::Q6_K},
      {quant::Type::Q5_K, quant::Type::IQ4_XS},
      {quant::Type::Q8_0, quant::Type::Q4_0, quant::Type::IQ4_NL, quant::Type::Q5_1}};
  const int64_t k = 512;
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (const auto& types : groups)
      for (int64_t m : {1, 2, 5, 33}) {
        std::vector<QPanels> ps;
        const int64_t ns[] = {48, 17, 100, 33};
        for (size_t i = 0; i < types.size(); ++i) {
          std::vector<uint8_t> w;
          std::vector<float> dec;
          make_weight(types[i], ns[i], k, uint32_t(11 * i + 1), w, dec);
          ps.push_back(QPanels::pack(types[i], w.data(), ns[i], k));
        }
        const std::vector<float> x = random_floats(size_t(m * k), uint32_t(m + 7), -2.0f, 2.0f);
        std::vector<std::vector<float>> alone, grouped;
        std::vector<const QPanels*> ws;
        std::vector<float*> ys;
        for (const QPanels& p : ps) {
          alone.emplace_back(size_t(m * p.n()), -1.0f);
          grouped.emplace_back(size_t(m * p.n()), -2.0f);
        }
        for (size_t i = 0; i < ps.size(); ++i) {
          matmul_qpanels(pool, x.data(), m, ps[i], alone[i].data());
          ws.push_back(&ps[i]);
          ys.push_back(grouped[i].data());
        }
        matmul_qpanels_group(pool, x.data(), m, ws, ys);
        for (size_t i = 0; i < ps.size(); ++i)
          EXPECT_TRUE(bit_equal(alone[i], grouped[i]))
              << quant::type_name(uint32_t(types[i])) << " weight " << i << " M=" << m << " threads=" << threads;
      }
  }
}

// Decode (M = 1) hands each thread a part of the tiles at equal weight bytes, claimed in pieces of
// about 128 KiB, the idle threads taking pieces from the back of the others' parts: on weights of
// many pieces (2 MiB here; 3 threads on this machine's cores steal often), the outputs are those of
// one thread and of the scalar reference, bit for bit.
TEST(QPanels, DecodeOverManyPiecesOnThreadsEqualsTheReference) {
  const quant::Type types[] = {quant::Type::Q4_K, quant::Type::Q4_K, quant::Type::Q6_K};
  const int64_t ns[] = {1024, 1000, 1040}, k = 1024;
  std::vector<QPanels> ps;
  for (size_t i = 0; i < 3; ++i) {
    std::vector<uint8_t> w;
    std::vector<float> dec;
    make_weight(types[i], ns[i], k, uint32_t(5 * i + 3), w, dec);
    ps.push_back(QPanels::pack(types[i], w.data(), ns[i], k));
  }
  const std::vector<float> x = random_floats(size_t(k), 21, -2.0f, 2.0f);
  ThreadPool one(1);
  std::vector<std::vector<float>> ref;
  for (const QPanels& p : ps) {
    ref.emplace_back(size_t(p.n()), -1.0f);
    matmul_qpanels(one, x.data(), 1, p, ref.back().data(), Isa::kScalar);
  }
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int rep = 0; rep < 4; ++rep) {
      std::vector<std::vector<float>> got;
      std::vector<float*> ys;
      for (const QPanels& p : ps) got.emplace_back(size_t(p.n()), -2.0f);
      for (auto& g : got) ys.push_back(g.data());
      const QPanels* ws[] = {&ps[0], &ps[1], &ps[2]};
      matmul_qpanels_group(pool, x.data(), 1, ws, ys);
      for (size_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(bit_equal(ref[i], got[i])) << "weight " << i << " threads=" << threads << " rep " << rep;
        std::vector<float> alone(size_t(ps[i].n()), -3.0f);
        matmul_qpanels(pool, x.data(), 1, ps[i], alone.data());
        EXPECT_TRUE(bit_equal(ref[i], alone)) << "weight " << i << " alone, threads=" << threads;
      }
    }
  }
}

// Decode walks consecutive Q8_0 tiles two at a time where the ISA has a two-tile kernel
// (qpanels_two_tiles.h; Q4_0, which has none, as the control): the outputs stay the one-tile
// kernel's and the reference's, bit for bit —
// an odd tile count (a single tile last), a second tile of one panel (N = 37: np 3) or of partial
// panels, pieces of an odd length on 2 and 3 threads — and nothing is written past N.
TEST(QPanels, TwoTileDecodeEqualsTheReference) {
  for (quant::Type type : {quant::Type::Q8_0, quant::Type::Q4_0}) {
    EXPECT_EQ(panel_two_tiles_kernel(type, Isa::kAvx512Vnni) != nullptr,
              type == quant::Type::Q8_0 && isa_supported(Isa::kAvx512Vnni));
    EXPECT_EQ(panel_two_tiles_kernel(type, Isa::kAvx2), nullptr);
    EXPECT_EQ(panel_two_tiles_kernel(type, Isa::kScalar), nullptr);
    for (int64_t k : {32, 256, 1024})
      for (int64_t n : {33, 37, 53, 87, 1000, 1040}) {
        std::vector<uint8_t> w;
        std::vector<float> dec;
        make_weight(type, n, k, uint32_t(n + 7 * k), w, dec);
        const QPanels p = QPanels::pack(type, w.data(), n, k);
        const std::vector<float> x = random_floats(size_t(k), uint32_t(k + n), -2.0f, 2.0f);
        ThreadPool one(1);
        std::vector<float> ref(size_t(n), -1.0f);
        matmul_qpanels(one, x.data(), 1, p, ref.data(), Isa::kScalar);
        for (int threads : {1, 2, 3}) {
          ThreadPool pool(threads);
          std::vector<float> got(size_t(n + 16), 7.0f);
          matmul_qpanels(pool, x.data(), 1, p, got.data());
          EXPECT_EQ(0, std::memcmp(ref.data(), got.data(), size_t(n) * sizeof(float)))
              << quant::type_name(uint32_t(type)) << " N=" << n << " K=" << k << " threads=" << threads;
          for (size_t i = size_t(n); i < got.size(); ++i) EXPECT_EQ(got[i], 7.0f) << "N=" << n << " past N at " << i;
        }
      }
  }
}

TEST(QPanels, GroupRefusesWeightsThatDoNotShareTheActivations) {
  ThreadPool pool(2);
  std::vector<uint8_t> w;
  std::vector<float> dec;
  make_weight(quant::Type::Q8_0, 16, 256, 1, w, dec);
  const QPanels a = QPanels::pack(quant::Type::Q8_0, w.data(), 16, 256);
  make_weight(quant::Type::Q4_K, 16, 256, 2, w, dec);
  const QPanels b = QPanels::pack(quant::Type::Q4_K, w.data(), 16, 256);  // blocks of 256, not 32
  make_weight(quant::Type::Q8_0, 16, 512, 3, w, dec);
  const QPanels c = QPanels::pack(quant::Type::Q8_0, w.data(), 16, 512);  // another K
  EXPECT_TRUE(same_activations(a, a));
  EXPECT_FALSE(same_activations(a, b));
  EXPECT_FALSE(same_activations(a, c));
  std::vector<float> x(512, 0.5f), y0(16), y1(16);
  float* ys[] = {y0.data(), y1.data()};
  for (const QPanels* other : {&b, &c}) {
    const QPanels* ws[] = {&a, other};
    try {
      matmul_qpanels_group(pool, x.data(), 1, ws, ys);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("does not share the activations of weight 0"), std::string::npos) << e.what();
    }
  }
  const QPanels* one[] = {&a};
  EXPECT_THROW(matmul_qpanels_group(pool, x.data(), 1, one, ys), Error);  // 1 weight, 2 outputs
}

TEST(QPanels, BadShapesAndTypesThrow) {
  std::vector<uint8_t> w(34 * 4, 0);
  EXPECT_THROW(QPanels::pack(quant::Type::Q8_0, w.data(), 1, 33), Error);
  EXPECT_THROW(QPanels::pack(quant::Type::Q8_0, w.data(), 0, 32), Error);
  EXPECT_THROW(QPanels::pack(quant::Type::Q8_0, w.data(), 1, 0), Error);
  EXPECT_THROW(QPanels::pack(quant::Type::F32, w.data(), 1, 32), Error);
  EXPECT_THROW(QPanels::pack(quant::Type::Q4_K, w.data(), 1, 32), Error);
  EXPECT_FALSE(QPanels::supports(quant::Type::F16));
  ThreadPool pool(1);
  const QPanels p = QPanels::pack(quant::Type::Q8_0, w.data(), 4, 32);
  float x[32] = {}, y[4];
  EXPECT_THROW(matmul_qpanels(pool, x, -1, p, y), Error);
#if defined(__x86_64__)
  const Isa foreign = Isa::kNeonDot;  // an ISA this build's CPU does not have: no kernel to run
#else
  const Isa foreign = Isa::kAvx2;
#endif
  EXPECT_THROW(matmul_qpanels(pool, x, 1, p, y, foreign), Error);
}

INSTANTIATE_TEST_SUITE_P(Types, QPanelsP,
                         ::testing::Values(quant::Type::Q8_0, quant::Type::Q4_0, quant::Type::Q4_1,
                                           quant::Type::Q5_0, quant::Type::Q5_1, quant::Type::Q2_K,
                                           quant::Type::Q3_K, quant::Type::Q4_K,
                                           quant::Type::Q5_K, quant::Type::Q6_K, quant::Type::IQ4_NL,
                                           quant::Type::IQ4_XS),
                         [](const auto& info) {
                           return std::string(quant::type_name(uint32_t(info.param)));
                         });

}  // namespace
}  // namespace ork::ops
