// Tensor element types of GGUF files (the ggml type ids) and their traits table.
//
// A quantized type stores a row of n elements as n / block_size blocks of type_size bytes each
// (blocks.h defines each block struct). Rows must be a whole number of blocks.
#pragma once

#include <cstdint>
#include <string_view>

namespace ork::quant {

// Values are the ggml type ids stored in GGUF tensor infos.
enum class Type : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ4_NL = 20,
  IQ4_XS = 23,
  BF16 = 30,
};

// Decodes n elements (a multiple of block_size) from `src` to f32.
using DecodeFn = void (*)(const void* src, float* dst, int64_t n);
// Encodes n elements (a multiple of block_size) from f32 to `dst` (reference quantizer).
using QuantizeFn = void (*)(const float* src, void* dst, int64_t n);

struct TypeTraits {
  Type type;
  std::string_view name;  // as ggml names it: "f32", "q4_K", ...
  int64_t block_size;     // elements per block (1 for f32/f16/bf16)
  int64_t type_size;      // bytes per block
  DecodeFn decode;        // never null for a supported type
  QuantizeFn quantize;    // never null for a supported type
};

// Whether `id` names a type ork can decode.
bool is_supported(uint32_t id);

// Traits of a supported type. Throws ork::Error naming the id when it is not supported.
const TypeTraits& traits(Type type);

// Name of a type id for messages ("q4_K", or "type 42" when unknown). Ids that ggml defines but ork
// cannot decode get ggml's name too ("iq2_xxs"), so errors can say which format a file uses.
std::string_view type_name(uint32_t id);

// Bytes of a row of n elements; throws ork::Error when n is not a whole number of blocks.
int64_t row_bytes(Type type, int64_t n);

// Blocks in a row of n elements (n / block_size). Throws ork::Error naming the type and n when n is
// negative or not a whole number of blocks.
int64_t block_count(Type type, int64_t n);

}  // namespace ork::quant
