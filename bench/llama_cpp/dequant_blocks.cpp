// dequant_blocks: blocks of every GGUF type ork decodes, and the floats ggml's own dequantizer makes of
// them, for the oracle fixtures (tests/fixtures/ggml_dequant/, read by
// tests/quant/ggml_dequant_oracle_test.cpp). Not part of ork's build or CI:
// bench/llama_cpp/make_dequant_fixtures.sh compiles it against a llama.cpp build (static libggml-base)
// and runs it.
//
// usage: dequant_blocks OUT_DIR
// Writes OUT_DIR/<type>.bin per type (ggml's type name), each (little-endian):
//   "ORKDQ001"            8 bytes, magic
//   u32 type              the ggml type id
//   u64 n                 elements
//   u64 bytes             bytes of the encoded row
//   bytes                 the encoded row (n / block size blocks)
//   n × f32               what ggml makes of them (type traits' to_float; q8_K: dequantize_row_q8_K;
//                         f32: the bytes themselves)
// The row holds, block by block (one block = 32 elements for f32/f16/bf16):
//   1. blocks quantized by ggml (ggml_quantize_chunk; q8_K: quantize_row_q8_K_ref; f16/bf16: ggml's
//      row converters) from inputs with edge values: normal noise, all zeros, a constant, magnitudes
//      near 1e-30 (scales that flush to zero or go subnormal in f16), magnitudes near 60000 (scales
//      near f16's largest), one outlier among small values, a negative extreme, exact ±1;
//   2. kRandomBlocks blocks of random bytes that ggml's to_float maps to finite floats only (so the
//      half-precision scale fields are not NaN/Inf: "valid" blocks), which reach bit patterns no
//      quantizer writes (every nibble, sign and scale bit).
// q8_1 is left out: ggml has no dequantizer for it (its traits' to_float is null), so there is no
// external value to compare with. The random numbers come from a fixed seed: reruns write the same files.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ggml.h"

extern "C" {
// ggml-quants.h (ggml/src, not installed): the q8_K pair, which the type traits leave out.
void quantize_row_q8_K_ref(const float* x, void* y, int64_t k);
void dequantize_row_q8_K(const void* x, float* y, int64_t k);
}

namespace {

constexpr int kRandomBlocks = 16;

struct Case {
  ggml_type type;
  int64_t block;  // elements per fixture block: ggml's block size, 32 for the plain formats
};

void to_float(ggml_type type, const void* src, float* dst, int64_t n) {
  if (type == GGML_TYPE_Q8_K) {
    dequantize_row_q8_K(src, dst, n);
    return;
  }
  if (type == GGML_TYPE_F32) {  // ggml's f32 rows are the floats themselves (no to_float entry)
    std::memcpy(dst, src, size_t(n) * sizeof(float));
    return;
  }
  const ggml_type_traits* t = ggml_get_type_traits(type);
  if (!t->to_float) {
    std::fprintf(stderr, "dequant_blocks: ggml has no to_float for %s\n", ggml_type_name(type));
    std::exit(1);
  }
  t->to_float(src, dst, n);
}

// Encodes one block of `block` elements with ggml's quantizer for `type`.
std::vector<uint8_t> quantize(ggml_type type, const std::vector<float>& x) {
  const int64_t n = int64_t(x.size());
  std::vector<uint8_t> out(ggml_row_size(type, n));
  switch (type) {
    case GGML_TYPE_F32: std::memcpy(out.data(), x.data(), out.size()); break;
    case GGML_TYPE_F16: ggml_fp32_to_fp16_row(x.data(), reinterpret_cast<ggml_fp16_t*>(out.data()), n); break;
    case GGML_TYPE_BF16: ggml_fp32_to_bf16_row_ref(x.data(), reinterpret_cast<ggml_bf16_t*>(out.data()), n); break;
    case GGML_TYPE_Q8_K: quantize_row_q8_K_ref(x.data(), out.data(), n); break;
    default: {
      ggml_quantize_init(type);
      const size_t wrote = ggml_quantize_chunk(type, x.data(), out.data(), 0, 1, n, nullptr);
      if (wrote != out.size()) {
        std::fprintf(stderr, "dequant_blocks: ggml_quantize_chunk(%s) wrote %zu bytes, want %zu\n",
                     ggml_type_name(type), wrote, out.size());
        std::exit(1);
      }
    }
  }
  return out;
}

// The edge-valued inputs of part 1, each `n` elements.
std::vector<std::vector<float>> edge_inputs(int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> rows;
  auto row = [&](auto f) {
    std::vector<float> r(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) r[size_t(i)] = f(i);
    rows.push_back(std::move(r));
  };
  row([&](int64_t) { return normal(rng); });
  row([&](int64_t) { return 0.0f; });
  row([&](int64_t) { return 0.375f; });
  row([&](int64_t) { return normal(rng) * 1e-30f; });
  row([&](int64_t) { return normal(rng) * 1e-6f; });
  row([&](int64_t) { return std::fmax(-60000.0f, std::fmin(60000.0f, normal(rng) * 30000.0f)); });
  row([&](int64_t i) { return i == n / 3 ? 1000.0f : normal(rng) * 0.01f; });
  row([&](int64_t i) { return i == 5 ? -7.5f : std::fabs(normal(rng)); });
  row([&](int64_t i) { return (i % 2) ? 1.0f : -1.0f; });
  return rows;
}

bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

void write_case(const std::string& dir, const Case& c, std::mt19937& rng) {
  const int64_t block_bytes = int64_t(ggml_row_size(c.type, c.block));
  std::vector<uint8_t> raw;
  for (const auto& x : edge_inputs(c.block, rng)) {
    const auto q = quantize(c.type, x);
    raw.insert(raw.end(), q.begin(), q.end());
  }
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<float> check(static_cast<size_t>(c.block));
  for (int made = 0, tries = 0; made < kRandomBlocks; ++tries) {
    if (tries > 100000) {
      std::fprintf(stderr, "dequant_blocks: no finite random %s block found\n", ggml_type_name(c.type));
      std::exit(1);
    }
    std::vector<uint8_t> b(static_cast<size_t>(block_bytes));
    for (auto& v : b) v = uint8_t(byte(rng));
    to_float(c.type, b.data(), check.data(), c.block);
    if (!all_finite(check)) continue;
    raw.insert(raw.end(), b.begin(), b.end());
    ++made;
  }
  const uint64_t n = uint64_t(raw.size() / size_t(block_bytes) * size_t(c.block));
  std::vector<float> want(n);
  to_float(c.type, raw.data(), want.data(), int64_t(n));

  const std::string path = dir + "/" + ggml_type_name(c.type) + ".bin";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::exit(1);
  }
  const uint32_t type = uint32_t(c.type);
  const uint64_t bytes = raw.size();
  std::fwrite("ORKDQ001", 1, 8, f);
  std::fwrite(&type, 4, 1, f);
  std::fwrite(&n, 8, 1, f);
  std::fwrite(&bytes, 8, 1, f);
  std::fwrite(raw.data(), 1, raw.size(), f);
  std::fwrite(want.data(), 4, want.size(), f);
  if (std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::printf("%s: %llu elements, %llu bytes\n", ggml_type_name(c.type), (unsigned long long)n,
              (unsigned long long)bytes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dequant_blocks OUT_DIR\n");
    return 2;
  }
  static_assert(sizeof(float) == 4);
  const Case cases[] = {
      {GGML_TYPE_F32, 32},  {GGML_TYPE_F16, 32},  {GGML_TYPE_BF16, 32},  {GGML_TYPE_Q4_0, 32},
      {GGML_TYPE_Q4_1, 32}, {GGML_TYPE_Q5_0, 32}, {GGML_TYPE_Q5_1, 32},  {GGML_TYPE_Q8_0, 32},
      {GGML_TYPE_Q2_K, 256}, {GGML_TYPE_Q3_K, 256}, {GGML_TYPE_Q4_K, 256}, {GGML_TYPE_Q5_K, 256},
      {GGML_TYPE_Q6_K, 256}, {GGML_TYPE_Q8_K, 256}, {GGML_TYPE_IQ4_NL, 32}, {GGML_TYPE_IQ4_XS, 256},
  };
  for (const Case& c : cases) {
    if (ggml_blck_size(c.type) != 1 && ggml_blck_size(c.type) != c.block) {
      std::fprintf(stderr, "dequant_blocks: %s has block size %lld here\n", ggml_type_name(c.type),
                   (long long)ggml_blck_size(c.type));
      return 1;
    }
    std::mt19937 rng(20261202u + uint32_t(c.type));
    write_case(argv[1], c, rng);
  }
  return 0;
}
