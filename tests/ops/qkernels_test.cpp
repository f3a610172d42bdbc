// Every ISA's qkernels against a double reference over the same quantized activations, for many
// block counts, tile shapes and weight misalignments; the scalar kernels are checked the same way.
#include "ops/qkernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/error.h"
#include "ops/gemm_i8.h"
#include "ops/reference.h"
#include "quant/types.h"

namespace ork::ops {
namespace {

using testing::random_floats;

struct FastType {
  quant::Type type;
  ActFormat act;
};

const FastType kFastTypes[] = {{quant::Type::Q8_0, ActFormat::kQ8A},
                               {quant::Type::Q4_0, ActFormat::kQ8A},
                               {quant::Type::Q4_K, ActFormat::kQ8K},
                               {quant::Type::Q6_K, ActFormat::kQ8K},
                               {quant::Type::F16, ActFormat::kF32}};

TileFn tile_of(const QKernels& kt, quant::Type t) {
  switch (t) {
    case quant::Type::Q8_0: return kt.q8_0;
    case quant::Type::Q4_0: return kt.q4_0;
    case quant::Type::Q4_K: return kt.q4_k;
    case quant::Type::Q6_K: return kt.q6_k;
    default: return kt.f16;
  }
}

// Activation rows in format `f` and their values as the kernels see them (dequantized).
void make_act(ActFormat f, const std::vector<float>& x, int64_t rows, int64_t k,
              std::vector<uint8_t>& bytes, int64_t& stride, std::vector<double>& seen) {
  seen.assign(x.size(), 0.0);
  if (f == ActFormat::kF32) {
    stride = k * 4;
    bytes.resize(size_t(rows * stride));
    std::memcpy(bytes.data(), x.data(), bytes.size());
    for (size_t i = 0; i < x.size(); ++i) seen[i] = x[i];
    return;
  }
  const int64_t bs = f == ActFormat::kQ8A ? quant::kQK : quant::kQK_K;
  const int64_t bb = f == ActFormat::kQ8A ? sizeof(BlockQ8A) : sizeof(quant::BlockQ8_K);
  stride = k / bs * bb;
  bytes.assign(size_t(rows * stride), 0);
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* row = bytes.data() + r * stride;
    if (f == ActFormat::kQ8A) {
      auto* b = reinterpret_cast<BlockQ8A*>(row);
      quantize_row_q8a(x.data() + r * k, k, b);
      for (int64_t i = 0; i < k; ++i) seen[size_t(r * k + i)] = double(b[i / bs].d) * b[i / bs].qs[i % bs];
    } else {
      auto* b = reinterpret_cast<quant::BlockQ8_K*>(row);
      quantize_row_q8k(x.data() + r * k, k, b);
      for (int64_t i = 0; i < k; ++i) seen[size_t(r * k + i)] = double(b[i / bs].d) * b[i / bs].qs[i % bs];
    }
  }
}

TEST(QuantizeAct, Q8ARoundsToNearestWithMaxScale) {
  const int64_t k = 96;
  std::vector<float> x = random_floats(size_t(k), 3, -2.0f, 2.0f);
  x[5] = 0.0f;
  std::fill(x.begin() + 64, x.end(), 0.0f);  // an all-zero block
  std::vector<BlockQ8A> q(size_t(k / 32));
  quantize_row_q8a(x.data(), k, q.data());
  for (int64_t b = 0; b < k / 32; ++b) {
    float amax = 0;
    int32_t sum = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[size_t(b * 32 + i)]));
    EXPECT_EQ(q[size_t(b)].d, amax / 127.0f);
    for (int i = 0; i < 32; ++i) {
      sum += q[size_t(b)].qs[i];
      EXPECT_LE(std::fabs(double(q[size_t(b)].d) * q[size_t(b)].qs[i] - x[size_t(b * 32 + i)]),
                0.5001 * q[size_t(b)].d + 1e-30);
    }
    EXPECT_EQ(q[size_t(b)].sum, sum);
  }
  EXPECT_EQ(q[2].d, 0.0f);
  EXPECT_EQ(q[2].qs[0], 0);
}

TEST(QuantizeAct, Q8KBlockSums) {
  const int64_t k = 512;
  const std::vector<float> x = random_floats(size_t(k), 4, -3.0f, 1.0f);
  std::vector<quant::BlockQ8_K> q(2);
  quantize_row_q8k(x.data(), k, q.data());
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 16; ++j) {
      int s = 0;
      for (int i = 0; i < 16; ++i) s += q[size_t(b)].qs[16 * j + i];
      EXPECT_EQ(q[size_t(b)].bsums[j], s);
      for (int i = 0; i < 16; ++i)
        EXPECT_LE(std::fabs(double(q[size_t(b)].d) * q[size_t(b)].qs[16 * j + i] -
                            x[size_t(256 * b + 16 * j + i)]),
                  0.5001 * q[size_t(b)].d);
    }
}

// d = max|x| / 127 exactly, wherever the largest magnitude sits (each of the eight lanes the
// maximum is taken over, and the last element), whatever its sign.
TEST(QuantizeAct, ScaleIsTheLargestMagnitudeAtEveryLane) {
  for (int64_t at = 0; at < 256; at += (at < 16 || at > 247) ? 1 : 37)
    for (float sign : {1.0f, -1.0f}) {
      std::vector<float> x = random_floats(256, uint32_t(at + 1), -1.0f, 1.0f);
      x[size_t(at)] = sign * 3.25f;
      quant::BlockQ8_K qk;
      quantize_row_q8k(x.data(), 256, &qk);
      EXPECT_EQ(qk.d, 3.25f / 127.0f) << "at " << at;
      EXPECT_EQ(qk.qs[at], int8_t(sign * 127)) << "at " << at;
      BlockQ8A qa[8];
      quantize_row_q8a(x.data(), 256, qa);
      EXPECT_EQ(qa[at / 32].d, 3.25f / 127.0f) << "at " << at;
    }
}

TEST(QKernels, UnsupportedIsaThrows) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni, Isa::kNeonDot}) {
    if (isa_supported(isa))
      EXPECT_NO_THROW(qkernels(isa));
    else
      EXPECT_THROW(qkernels(isa), Error);
  }
  EXPECT_TRUE(isa_supported(Isa::kScalar));
  EXPECT_EQ(supported_isas().front(), Isa::kScalar);
  EXPECT_EQ(supported_isas().back(), best_isa());
}

TEST(QKernels, TilesMatchDoubleReferenceOnEveryIsa) {
  for (Isa isa : supported_isas()) {
    const QKernels& kt = qkernels(isa);
    for (const FastType& ft : kFastTypes) {
      const quant::TypeTraits& tt = quant::traits(ft.type);
      const int64_t bs = ft.act == ActFormat::kQ8K ? quant::kQK_K : tt.block_size == 1 ? 1 : quant::kQK;
      const std::vector<int64_t> counts = bs == 1 ? std::vector<int64_t>{1, 7, 8, 9, 31, 64, 100, 1000}
                                                  : std::vector<int64_t>{1, 2, 3, 5, 8, 17};
      for (int64_t nb : counts) {
        const int64_t k = nb * bs;
        const int64_t wrow = quant::row_bytes(ft.type, k);
        for (int misalign : {0, 1, 2, 3}) {
          SCOPED_TRACE(::testing::Message() << isa_name(isa) << " " << tt.name << " K=" << k
                                            << " misalign=" << misalign);
          // 4 weight rows (random, one row of large values), 4 activation rows.
          const int nw_max = kTileW, nx_max = kTileX;
          const std::vector<float> src = random_floats(size_t(nw_max * k), uint32_t(k + misalign), -1.0f, 1.0f);
          std::vector<uint8_t> wbuf(size_t(nw_max * wrow + misalign));
          uint8_t* w = wbuf.data() + misalign;
          std::vector<float> wd(size_t(nw_max * k)), mpart(size_t(nw_max * k));
          for (int r = 0; r < nw_max; ++r) {
            tt.quantize(src.data() + r * k, w + r * wrow, k);
            tt.decode(w + r * wrow, wd.data() + r * k, k);
          }
          // The offset part of each weight (decode with the quants zeroed, scales kept): bounds the
          // cancellation inside a block for the formats with mins.
          if (bs != 1) {
            std::vector<uint8_t> z(w, w + nw_max * wrow);
            const int64_t blk = quant::row_bytes(ft.type, tt.block_size);
            for (int64_t off = 0; off < int64_t(z.size()); off += blk) {
              if (ft.type == quant::Type::Q8_0) std::memset(&z[size_t(off + 2)], 0, 32);
              if (ft.type == quant::Type::Q4_0) std::memset(&z[size_t(off + 2)], 0x88, 16);
              if (ft.type == quant::Type::Q4_K) std::memset(&z[size_t(off + 16)], 0, 128);
              if (ft.type == quant::Type::Q6_K) std::memset(&z[size_t(off)], 0, 192);
            }
            for (int r = 0; r < nw_max; ++r) tt.decode(z.data() + r * wrow, mpart.data() + r * k, k);
          }
          const std::vector<float> x = random_floats(size_t(nx_max * k), uint32_t(3 * k + 1), -2.0f, 2.0f);
          std::vector<uint8_t> act;
          int64_t xs = 0;
          std::vector<double> xseen;
          make_act(ft.act, x, nx_max, k, act, xs, xseen);
          for (int nw = 1; nw <= nw_max; ++nw)
            for (int nx = 1; nx <= nx_max; ++nx) {
              const int64_t ys = 7;
              std::vector<float> y(size_t(nx * ys), NAN);
              tile_of(kt, ft.type)(bs == 1 ? k : nb, w, wrow, nw, act.data(), xs, nx, y.data(), ys);
              for (int i = 0; i < nx; ++i)
                for (int j = 0; j < nw; ++j) {
                  double ref = 0, mag = 0;
                  for (int64_t e = 0; e < k; ++e) {
                    const double xv = xseen[size_t(i * k + e)];
                    ref += double(wd[size_t(j * k + e)]) * xv;
                    mag += (std::fabs(wd[size_t(j * k + e)]) + 2 * std::fabs(mpart[size_t(j * k + e)])) *
                           std::fabs(xv);
                  }
                  // f32: one rounding per element group of 8 lanes / per block, plus the scales.
                  const double tol = double(k / 8 + nb + 16) * 1.2e-7 * mag + 1e-30;
                  ASSERT_NEAR(y[size_t(i * ys + j)], ref, tol) << "nw=" << nw << " nx=" << nx
                                                               << " out " << i << "," << j;
                }
            }
        }
      }
    }
  }
}

// Every ISA gives the same output for an element whatever the tile it is computed in.
TEST(QKernels, TileShapeDoesNotChangeResults) {
  for (Isa isa : supported_isas()) {
    const QKernels& kt = qkernels(isa);
    for (const FastType& ft : kFastTypes) {
      const quant::TypeTraits& tt = quant::traits(ft.type);
      const int64_t bs = ft.act == ActFormat::kQ8K ? quant::kQK_K : tt.block_size == 1 ? 1 : quant::kQK;
      const int64_t nb = bs == 1 ? 77 : 4, k = nb * bs;
      const int64_t wrow = quant::row_bytes(ft.type, k);
      const std::vector<float> src = random_floats(size_t(4 * k), 11);
      std::vector<uint8_t> w(size_t(4 * wrow));
      for (int r = 0; r < 4; ++r) tt.quantize(src.data() + r * k, w.data() + r * wrow, k);
      std::vector<uint8_t> act;
      int64_t xs;
      std::vector<double> seen;
      make_act(ft.act, random_floats(size_t(4 * k), 12), 4, k, act, xs, seen);
      const int64_t n_arg = bs == 1 ? k : nb;
      std::vector<float> full(16), single(16);
      tile_of(kt, ft.type)(n_arg, w.data(), wrow, 4, act.data(), xs, 4, full.data(), 4);
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          tile_of(kt, ft.type)(n_arg, w.data() + j * wrow, wrow, 1, act.data() + i * xs, xs, 1,
                               &single[size_t(i * 4 + j)], 4);
      EXPECT_TRUE(testing::bit_equal(full, single)) << isa_name(isa) << " " << tt.name;
    }
  }
}

TEST(QKernels, DotI8ExactOnEveryIsaIncludingExtremes) {
  for (Isa isa : supported_isas()) {
    const QKernels& kt = qkernels(isa);
    for (int64_t k : {0, 1, 15, 16, 17, 33, 100, 4096}) {
      for (int misalign : {0, 1, 3}) {
        std::vector<int8_t> a(size_t(k + misalign)), b(size_t(k + misalign));
        std::mt19937 gen{uint32_t(k)};
        for (size_t i = 0; i < a.size(); ++i) {
          a[i] = int8_t(int(gen() % 256) - 128);
          b[i] = int8_t(int(gen() % 256) - 128);
        }
        // A run of −128·−128 products (saturates int16 pair sums if done naively).
        for (int64_t i = 0; i < std::min<int64_t>(k, 40); ++i) a[size_t(misalign + i)] = b[size_t(misalign + i)] = -128;
        int64_t ref = 0;
        for (int64_t i = 0; i < k; ++i) ref += int64_t(a[size_t(misalign + i)]) * b[size_t(misalign + i)];
        EXPECT_EQ(kt.dot_i8(a.data() + misalign, b.data() + misalign, k), ref)
            << isa_name(isa) << " k=" << k << " misalign=" << misalign;
      }
    }
  }
}

}  // namespace
}  // namespace ork::ops
