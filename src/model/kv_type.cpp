#include "model/kv_type.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/fp16_rows.h"
#include "core/non_finite.h"
#include "core/quote.h"
#include "quant/decode.h"
#include "quant/quantize.h"
#include "quant/types.h"

namespace ork::model {

const char* kv_type_name(KvType t) {
  switch (t) {
    case KvType::kF32: return "f32";
    case KvType::kF16: return "f16";
    case KvType::kQ8_0: return "q8_0";
  }
  return "?";
}

KvType parse_kv_type(std::string_view name) {
  for (KvType t : {KvType::kF32, KvType::kF16, KvType::kQ8_0}) {
    if (name == kv_type_name(t)) return t;
  }
  fail("unknown KV cache type ", quote(name), " (choose f32, f16 or q8_0)");
}

uint64_t kv_row_bytes(KvType t, int64_t kv_dim) {
  ORK_CHECK(kv_dim >= 1, "KV cache: kv_dim ", kv_dim, " must be >= 1");
  switch (t) {
    case KvType::kF32: return uint64_t(kv_dim) * 4;
    case KvType::kF16: return uint64_t(kv_dim) * 2;
    case KvType::kQ8_0:
      ORK_CHECK(kv_dim % 32 == 0, "a q8_0 KV cache needs kv_dim (n_head_kv × head_dim) to be a multiple of 32; "
                "this model's is ", kv_dim, " (use --kv-type f16)");
      return uint64_t(quant::row_bytes(quant::Type::Q8_0, kv_dim));
  }
  return 0;
}

void kv_store_rows(KvType t, const float* src, int64_t n, int64_t kv_dim, void* dst, const char* what,
                   int64_t layer) {
  const int64_t count = n * kv_dim;
  const float limit = t == KvType::kF16 ? 65520.0f : INFINITY;  // f16 rounds |x| >= 65520 to inf
  if (const int64_t i = first_not_below(src, count, limit); i >= 0) {
    fail("value ", src[i], " for the ", kv_type_name(t), " KV cache: ", what, " of layer ", layer,
         " at batch row ", i / kv_dim, ", element ", i % kv_dim,
         t == KvType::kF16 && std::isfinite(src[i]) ? " is beyond f16's range (use --kv-type f32)"
                                                    : ": the weights or the input hold NaN/Inf or overflowed");
  }
  switch (t) {
    case KvType::kF32: std::memcpy(dst, src, size_t(count) * sizeof(float)); return;
    case KvType::kF16:  // checked above: the conversion alone (quantize_f16 would scan again)
      if (reinterpret_cast<uintptr_t>(dst) % alignof(uint16_t) == 0) {
        f32_to_f16_n(src, count, static_cast<uint16_t*>(dst));
      } else {
        quant::quantize_f16(src, dst, count);
      }
      return;
    case KvType::kQ8_0: quant::quantize_q8_0_ggml(src, dst, count); return;
  }
}

void kv_load_rows(KvType t, const void* src, int64_t n, int64_t kv_dim, float* dst) {
  const int64_t count = n * kv_dim;
  switch (t) {
    case KvType::kF32: std::memcpy(dst, src, size_t(count) * sizeof(float)); return;
    case KvType::kF16: quant::decode_f16(src, dst, count); return;
    case KvType::kQ8_0: quant::decode_q8_0(src, dst, count); return;
  }
}

}  // namespace ork::model
