// KvType — the element type of a KV cache: f32, f16 (llama.cpp's default) or q8_0 (ggml's blocks of
// 32 int8 with an fp16 scale, 34 bytes). Rows are one position's K (or V) of kv_dim values.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace ork::model {

enum class KvType : uint8_t { kF32, kF16, kQ8_0 };

// "f32", "f16", "q8_0".
const char* kv_type_name(KvType t);

// The type named `name` (as kv_type_name spells it); ork::Error naming it and the choices otherwise.
KvType parse_kv_type(std::string_view name);

// Bytes of one row of kv_dim values of type t. ork::Error when q8_0 and kv_dim is not a multiple of
// 32 (the block size) or kv_dim < 1.
uint64_t kv_row_bytes(KvType t, int64_t kv_dim);

// Converts n rows of kv_dim f32 values (src, contiguous) to type t at dst (n · kv_row_bytes bytes):
// f16 rounds to nearest even, q8_0 quantizes as ggml's quantize_row_q8_0_ref. ork::Error naming
// `what` ("K" or "V"), the layer, the row and the value when a value is not finite or, for f16,
// rounds beyond its range (|x| >= 65520): the cache would hold ±inf.
void kv_store_rows(KvType t, const float* src, int64_t n, int64_t kv_dim, void* dst, const char* what,
                   int64_t layer);

// The inverse: n rows of type t at src to f32 (exact widening for f16, d · q for q8_0).
void kv_load_rows(KvType t, const void* src, int64_t n, int64_t kv_dim, float* dst);

}  // namespace ork::model
