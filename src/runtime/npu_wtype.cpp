#include "runtime/npu_wtype.h"

#include "core/error.h"
#include "core/quote.h"

namespace ork::runtime {

NpuWtype parse_npu_wtype(const std::string& t) {
  if (t == "i8") return NpuWtype::kI8;
  if (t == "i4") return NpuWtype::kI4;
  if (t == "i4a4") return NpuWtype::kI4A4;
  if (t == "auto") return NpuWtype::kAuto;
  fail("npu weight type ", quote(t), " is not one of i8, i4, i4a4, auto");
}

const char* npu_wtype_name(NpuWtype t) {
  switch (t) {
    case NpuWtype::kI8: return "i8";
    case NpuWtype::kI4: return "i4";
    case NpuWtype::kI4A4: return "i4a4";
    case NpuWtype::kAuto: return "auto";
  }
  return "?";
}

bool is_4_or_5_bit(quant::Type t) {
  using quant::Type;
  switch (t) {
    case Type::Q4_0: case Type::Q4_1: case Type::Q4_K: case Type::Q5_0: case Type::Q5_1: case Type::Q5_K:
    case Type::IQ4_NL: case Type::IQ4_XS:
      return true;
    default:
      return false;
  }
}

npu::Dtype resolve_npu_wtype(NpuWtype t, const model::Weights& weights) {
  if (t == NpuWtype::kI8) return npu::Dtype::kI8;
  if (t == NpuWtype::kI4 || t == NpuWtype::kI4A4) return npu::Dtype::kI4;
  uint64_t low = 0, all = 0;
  for (const model::Linear* l : weights.linears()) {
    const uint64_t e = uint64_t(l->n) * uint64_t(l->k);
    all += e;
    if (is_4_or_5_bit(l->w->type)) low += e;
  }
  return 2 * low > all ? npu::Dtype::kI4 : npu::Dtype::kI8;
}

}  // namespace ork::runtime
