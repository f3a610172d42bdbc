// Reference quantizers: quantize fixed-seed random data, decode, and bound the error per element by
// a tolerance derived from each format's levels and scale rules (docs/quant.md, "Reference
// quantizers"). Also exact cases, special blocks, determinism and input errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "quant/decode.h"
#include "quant/quantize.h"
#include "quant/types.h"

namespace ork::quant {
namespace {

constexpr float kF16Rel = 1.0f / 1024;  // fp16 rounding up/down: at most 2^-10 relative

std::vector<float> random_data(uint32_t seed, int64_t n, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng);
  // Some blocks shifted so that they are all positive or all negative (tests the min handling).
  for (int64_t i = 0; i < std::min<int64_t>(n, 256); ++i) x[size_t(i)] = std::fabs(x[size_t(i)]) + scale;
  for (int64_t i = 256; i < std::min<int64_t>(n, 512); ++i) x[size_t(i)] = -std::fabs(x[size_t(i)]) - 0.5f * scale;
  return x;
}

std::vector<float> round_trip(Type type, const std::vector<float>& x) {
  const int64_t n = int64_t(x.size());
  std::vector<uint8_t> bytes(size_t(row_bytes(type, n)), 0xcd);
  traits(type).quantize(x.data(), bytes.data(), n);
  std::vector<float> y(x.size());
  decode_row(type, bytes.data(), y.data(), n);
  return y;
}

struct Stats {
  float amax = 0, mn = 0, mx = 0;
};
Stats stats(const float* x, int n) {
  Stats s{0, x[0], x[0]};
  for (int i = 0; i < n; ++i) {
    s.amax = std::max(s.amax, std::fabs(x[i]));
    s.mn = std::min(s.mn, x[i]);
    s.mx = std::max(s.mx, x[i]);
  }
  return s;
}

// Tolerance of every element of one block of `block` elements starting at x.
using Tolerance = std::function<float(const float* x)>;

// IQ4 block scale: the block's extremes inside the grid's [-127, 113].
float grid_scale(const Stats& s) { return std::max(std::max(s.mx, 0.0f) / 113, -std::min(s.mn, 0.0f) / 127); }

// Symmetric block formats: levels -L..L-1 with d = amax / (L - 1/2), or -127..127 with amax / 127.
Tolerance symmetric(int block, float divisor) {
  return [=](const float* x) {
    const float amax = stats(x, block).amax;
    return 0.5f * amax / divisor * (1 + kF16Rel) + 1e-6f * amax;
  };
}

// _1 formats: m = min rounded down to fp16, d = (max - m) / nmax rounded up.
Tolerance with_min(int block, int nmax) {
  return [=](const float* x) {
    const Stats s = stats(x, block);
    const float range = s.mx - s.mn + kF16Rel * std::fabs(s.mn);
    return 0.5f * range / float(nmax) * (1 + kF16Rel) + 1e-6f * s.amax;
  };
}

// K "min" formats: sub-blocks of `sub`, quants 0..nmax, scale/min codes 0..smax. With
// R = max over sub-blocks of (max - min(0, min)): the offset code step is <= R/smax (+2^-10), so a
// sub-block's wanted step is <= R (1 + 1.001/smax) / nmax and the coded step exceeds it by at most
// one super-scale step (<= 1.001/smax of the largest): half of that bounds the error.
Tolerance k_min(int sub, int nmax, int smax) {
  return [=](const float* x) {
    float r = 0, amax = 0;
    for (int j = 0; j < 256 / sub; ++j) {
      const Stats s = stats(x + j * sub, sub);
      r = std::max(r, s.mx - std::min(0.0f, s.mn));
      amax = std::max(amax, s.amax);
    }
    const float grow = 1 + 1.001f / float(smax);
    return 0.5f * r * grow * grow / float(nmax) + 1e-5f * amax;
  };
}

// K symmetric formats: 16 sub-blocks of 16, levels -L..L-1, scale codes 1..smax:
// step <= amax/(L - 1/2) * (1 + 1.001/smax).
Tolerance k_sym(int levels, int smax) {
  return [=](const float* x) {
    const float amax = stats(x, 256).amax;
    return 0.5f * amax / (float(levels) - 0.5f) * (1 + 1.001f / float(smax)) + 1e-5f * amax;
  };
}

struct Case {
  Type type;
  int block;
  Tolerance tol;
};

std::vector<Case> cases() {
  return {
      {Type::F32, 1, [](const float*) { return 0.0f; }},
      // Half an ulp: 2^-11 relative for normals, 2^-25 absolute for subnormals.
      {Type::F16, 1, [](const float* x) { return std::max(std::fabs(*x) / 2048, 0x1p-25f); }},
      {Type::BF16, 1, [](const float* x) { return std::fabs(*x) * (1.0f / 256); }},
      {Type::Q4_0, 32, symmetric(32, 7.5f)},
      {Type::Q5_0, 32, symmetric(32, 15.5f)},
      {Type::Q8_0, 32, symmetric(32, 127.0f)},
      {Type::Q8_1, 32, symmetric(32, 127.0f)},
      {Type::Q4_1, 32, with_min(32, 15)},
      {Type::Q5_1, 32, with_min(32, 31)},
      {Type::Q2_K, 256, k_min(16, 3, 15)},
      {Type::Q4_K, 256, k_min(32, 15, 63)},
      {Type::Q5_K, 256, k_min(32, 31, 63)},
      {Type::Q3_K, 256, k_sym(4, 31)},
      {Type::Q6_K, 256, k_sym(32, 127)},
      {Type::Q8_K, 256, [](const float* x) {
         const float amax = stats(x, 256).amax;
         return 0.5f * amax / 127 + 1e-6f * amax;
       }},
      // The grid [-127, 113] has gaps of at most 24: half of that times the scale (quantize_iq4.cpp).
      {Type::IQ4_NL, 32, [](const float* x) {
         const Stats s = stats(x, 32);
         return 12 * grid_scale(s) * (1 + kF16Rel) + 1e-6f * s.amax;
       }},
      {Type::IQ4_XS, 256, [](const float* x) {
         float smax = 0, amax = 0;
         for (int j = 0; j < 8; ++j) {
           const Stats s = stats(x + 32 * j, 32);
           smax = std::max(smax, grid_scale(s));
           amax = std::max(amax, s.amax);
         }
         return 12 * smax * (1 + 1.001f / 31) * (1 + kF16Rel) + 1e-5f * amax;
       }},
  };
}

TEST(QuantRoundTrip, ErrorWithinFormatBound) {
  const int64_t n = 256 * 8;
  for (const float scale : {1.0f, 0.01f, 30.0f}) {
    const auto x = random_data(uint32_t(1000 * scale + 7), n, scale);
    for (const Case& c : cases()) {
      SCOPED_TRACE(std::string(type_name(uint32_t(c.type))) + " scale " + std::to_string(scale));
      const auto y = round_trip(c.type, x);
      double max_ratio = 0;
      for (int64_t b = 0; b < n / c.block; ++b) {
        const float tol = c.tol(x.data() + b * c.block);
        for (int64_t j = b * c.block; j < (b + 1) * c.block; ++j) {
          const float err = std::fabs(y[size_t(j)] - x[size_t(j)]);
          ASSERT_LE(err, tol) << "element " << j << " x " << x[size_t(j)] << " y " << y[size_t(j)];
          if (tol > 0) max_ratio = std::max(max_ratio, double(err / tol));
        }
      }
      // The bound is not loose by orders of magnitude: some element comes near it.
      if (c.type != Type::F32) {
        EXPECT_GT(max_ratio, 0.3);
      }
    }
  }
}

TEST(QuantRoundTrip, ZeroBlocksDecodeToZero) {
  const std::vector<float> x(512, 0.0f);
  for (const Case& c : cases()) {
    SCOPED_TRACE(type_name(uint32_t(c.type)));
    EXPECT_EQ(round_trip(c.type, x), x);
  }
}

TEST(QuantRoundTrip, ConstantBlocks) {
  for (const float v : {3.0f, -0.75f}) {
    const std::vector<float> x(512, v);
    for (const Case& c : cases()) {
      SCOPED_TRACE(std::string(type_name(uint32_t(c.type))) + " " + std::to_string(v));
      const auto y = round_trip(c.type, x);
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_NEAR(y[i], v, c.tol(x.data() + i / size_t(c.block) * size_t(c.block)) + 1e-6f);
      }
    }
  }
}

TEST(QuantRoundTrip, GridValuesAreExact) {
  // Q8_0 with amax 63.5: d = 0.5 exactly, so every multiple of 0.5 in range is on the grid.
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[size_t(i)] = 0.5f * float((i * 37) % 255 - 127);
  x[0] = 63.5f;
  x[32] = -63.5f;
  EXPECT_EQ(round_trip(Type::Q8_0, x), x);
  EXPECT_EQ(round_trip(Type::Q8_K, std::vector<float>(256, 127.0f)), std::vector<float>(256, 127.0f));
  // Q4_1: values 0..15 with min 0, max 15: d = 1, m = 0.
  std::vector<float> y(32);
  for (int i = 0; i < 32; ++i) y[size_t(i)] = float((i * 7) % 16);
  y[0] = 0;
  y[1] = 15;
  EXPECT_EQ(round_trip(Type::Q4_1, y), y);
}

TEST(QuantRoundTrip, Deterministic) {
  const auto x = random_data(99, 512, 1.0f);
  for (const Case& c : cases()) {
    SCOPED_TRACE(type_name(uint32_t(c.type)));
    const size_t bytes = size_t(row_bytes(c.type, 512));
    std::vector<uint8_t> a(bytes, 0x00), b(bytes, 0xff);
    traits(c.type).quantize(x.data(), a.data(), 512);
    traits(c.type).quantize(x.data(), b.data(), 512);
    EXPECT_EQ(a, b);  // and every byte written, whatever was there before
  }
}

TEST(QuantRoundTrip, Q8_1StoresScaledSum) {
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[size_t(i)] = float(i % 5) - 1.0f;  // amax 3
  std::vector<uint8_t> bytes(36);
  quantize_q8_1(x.data(), bytes.data(), 32);
  const float d = f16_to_f32(uint16_t(bytes[0] | bytes[1] << 8));
  int sum = 0;
  for (int i = 0; i < 32; ++i) sum += int8_t(bytes[4 + size_t(i)]);
  EXPECT_EQ(uint16_t(bytes[2] | bytes[3] << 8), f32_to_f16(float(sum) * d));
}

TEST(QuantRoundTrip, Q8_KStoresBlockSums) {
  const auto x = random_data(5, 256, 1.0f);
  std::vector<uint8_t> bytes(292);
  quantize_q8_K(x.data(), bytes.data(), 256);
  for (int j = 0; j < 16; ++j) {
    int sum = 0;
    for (int l = 0; l < 16; ++l) sum += int8_t(bytes[4 + 16 * size_t(j) + size_t(l)]);
    EXPECT_EQ(int16_t(bytes[260 + 2 * size_t(j)] | bytes[261 + 2 * size_t(j)] << 8), sum) << j;
  }
}

TEST(QuantRoundTrip, RejectsNonFiniteInputNamingTheElement) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(type_name(uint32_t(c.type)));
    std::vector<float> x(256, 1.0f);
    x[77] = std::numeric_limits<float>::quiet_NaN();
    std::vector<uint8_t> bytes(size_t(row_bytes(c.type, 256)));
    try {
      traits(c.type).quantize(x.data(), bytes.data(), 256);
      FAIL() << "expected ork::Error";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("77"));
      EXPECT_THAT(e.what(), ::testing::HasSubstr(std::string(type_name(uint32_t(c.type)))));
    }
    x[77] = std::numeric_limits<float>::infinity();
    EXPECT_THROW(traits(c.type).quantize(x.data(), bytes.data(), 256), Error);
  }
}

TEST(QuantRoundTrip, RejectsScalesBeyondFp16) {
  const std::vector<float> x(256, 1.0e9f);
  std::vector<uint8_t> bytes(1024);
  for (const Type t : {Type::Q4_0, Type::Q4_1, Type::Q8_0, Type::Q2_K, Type::Q3_K, Type::Q4_K,
                       Type::Q6_K}) {
    SCOPED_TRACE(type_name(uint32_t(t)));
    EXPECT_THROW(traits(t).quantize(x.data(), bytes.data(), 256), Error);
  }
}

}  // namespace
}  // namespace ork::quant
