#include "quant/types.h"

#include <array>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "quant/blocks.h"
#include "quant/decode.h"
#include "quant/quantize.h"

namespace ork::quant {
namespace {

// The one traits table: every type ork can decode and encode.
constexpr TypeTraits kTraits[] = {
    {Type::F32, "f32", 1, sizeof(float), decode_f32, quantize_f32},
    {Type::F16, "f16", 1, sizeof(uint16_t), decode_f16, quantize_f16},
    {Type::BF16, "bf16", 1, sizeof(uint16_t), decode_bf16, quantize_bf16},
    {Type::Q4_0, "q4_0", kQK, sizeof(BlockQ4_0), decode_q4_0, quantize_q4_0},
    {Type::Q4_1, "q4_1", kQK, sizeof(BlockQ4_1), decode_q4_1, quantize_q4_1},
    {Type::Q5_0, "q5_0", kQK, sizeof(BlockQ5_0), decode_q5_0, quantize_q5_0},
    {Type::Q5_1, "q5_1", kQK, sizeof(BlockQ5_1), decode_q5_1, quantize_q5_1},
    {Type::Q8_0, "q8_0", kQK, sizeof(BlockQ8_0), decode_q8_0, quantize_q8_0},
    {Type::Q8_1, "q8_1", kQK, sizeof(BlockQ8_1), decode_q8_1, quantize_q8_1},
    {Type::Q2_K, "q2_K", kQK_K, sizeof(BlockQ2_K), decode_q2_K, quantize_q2_K},
    {Type::Q3_K, "q3_K", kQK_K, sizeof(BlockQ3_K), decode_q3_K, quantize_q3_K},
    {Type::Q4_K, "q4_K", kQK_K, sizeof(BlockQ4_K), decode_q4_K, quantize_q4_K},
    {Type::Q5_K, "q5_K", kQK_K, sizeof(BlockQ5_K), decode_q5_K, quantize_q5_K},
    {Type::Q6_K, "q6_K", kQK_K, sizeof(BlockQ6_K), decode_q6_K, quantize_q6_K},
    {Type::Q8_K, "q8_K", kQK_K, sizeof(BlockQ8_K), decode_q8_K, quantize_q8_K},
    {Type::IQ4_NL, "iq4_nl", kQK, sizeof(BlockIQ4_NL), decode_iq4_nl, quantize_iq4_nl},
    {Type::IQ4_XS, "iq4_xs", kQK_K, sizeof(BlockIQ4_XS), decode_iq4_xs, quantize_iq4_xs},
};

const TypeTraits* find(uint32_t id) {
  for (const TypeTraits& t : kTraits) {
    if (static_cast<uint32_t>(t.type) == id) return &t;
  }
  return nullptr;
}

// ggml's names for the ids it defines that ork does not decode (ggml/include/ggml.h, enum
// ggml_type). Empty: no type with that id (removed or never assigned).
constexpr std::string_view kGgmlOnlyNames[] = {
    "", "", "", "", "q4_2", "q4_3", "", "", "", "", "", "", "", "", "", "",  // 0..15
    "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl", "iq3_s", "iq2_s", "iq4_xs",  // 16..23
    "i8", "i16", "i32", "i64", "f64", "iq1_m", "", "q4_0_4_4",                    // 24..31
    "q4_0_4_8", "q4_0_8_8", "tq1_0", "tq2_0", "iq4_nl_4_4", "iq4_nl_4_8", "iq4_nl_8_8",  // 32..38
    "mxfp4",                                                                      // 39
};

// "type N" strings for unnamed ids, built once (type_name returns views into them).
constexpr uint32_t kNumberedNames = 256;
const std::array<std::string, kNumberedNames>& numbered_names() {
  static const std::array<std::string, kNumberedNames> names = [] {
    std::array<std::string, kNumberedNames> out;
    for (uint32_t i = 0; i < kNumberedNames; ++i) out[i] = "type " + std::to_string(i);
    return out;
  }();
  return names;
}

}  // namespace

bool is_supported(uint32_t id) { return find(id) != nullptr; }

const TypeTraits& traits(Type type) {
  const uint32_t id = static_cast<uint32_t>(type);
  const TypeTraits* t = find(id);
  if (t == nullptr) fail("unsupported tensor type ", type_name(id), " (ggml type id ", id, ")");
  return *t;
}

std::string_view type_name(uint32_t id) {
  if (const TypeTraits* t = find(id)) return t->name;
  if (id < std::size(kGgmlOnlyNames) && !kGgmlOnlyNames[id].empty()) return kGgmlOnlyNames[id];
  if (id < kNumberedNames) return numbered_names()[id];
  // Rare (a corrupt file): keep one string per distinct id; node-based, so views stay valid.
  static std::mutex mutex;
  static std::unordered_map<uint32_t, std::string> names;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = names.try_emplace(id, "type " + std::to_string(id));
  return it->second;
}

int64_t block_count(Type type, int64_t n) {
  const TypeTraits& t = traits(type);
  if (n < 0 || n % t.block_size != 0) {
    fail(t.name, ": a row of ", n, " elements is not a whole number of ", t.block_size,
         "-element blocks");
  }
  return n / t.block_size;
}

int64_t row_bytes(Type type, int64_t n) {
  const int64_t blocks = block_count(type, n);
  int64_t bytes;
  if (__builtin_mul_overflow(blocks, traits(type).type_size, &bytes)) {
    fail(traits(type).name, ": row of ", n, " elements overflows the byte count");
  }
  return bytes;
}

}  // namespace ork::quant
