#include "npu/cbuf_budget.h"

#include <algorithm>

namespace ork::npu {

uint32_t input_banks(Dtype d, uint32_t m, uint32_t k) {
  const uint64_t bytes = uint64_t(m) * k * uint64_t(elt_bytes(d));
  return uint32_t((bytes + kCbufBankBytes - 1) / kCbufBankBytes);
}

uint32_t max_data_banks(Dtype d) {
  if (generator_faults().eleven_data_banks) return kCbufBanks - 1;
  return d == Dtype::kI8 ? 8 : 10;
}

uint32_t weight_atom_banks(Dtype d, uint32_t k) {
  if (generator_faults().eleven_data_banks) return 1;
  const uint64_t atom = uint64_t(kWeightAtomKernels) * k * uint64_t(elt_bytes(d));
  return uint32_t(std::min<uint64_t>((atom + kCbufBankBytes - 1) / kCbufBankBytes, kCbufBanks - 1));
}

bool fits_cbuf(Dtype d, uint32_t m, uint32_t k) {
  const uint32_t banks = input_banks(d, m, k);
  return banks >= 1 && banks <= max_data_banks(d) && kCbufBanks - banks >= weight_atom_banks(d, k);
}

uint32_t feature_grains(Dtype d, uint32_t m, uint32_t k) {
  if (d == Dtype::kF16) return m + 1;
  const uint32_t row_bytes = k;  // int8: one byte per element
  if (row_bytes > 4096 && m >= 16) return 30;
  const uint32_t two_bank_rows = ((2 * kCbufBankBytes + row_bytes - 1) / row_bytes + 1) & ~1u;
  return std::max<uint32_t>(1, std::min(m + 1, two_bank_rows));
}

int64_t max_m_tile(Dtype d, int64_t ks) {
  int64_t rows = int64_t(max_data_banks(d)) * kCbufBankBytes / (ks * elt_bytes(d));
  rows = std::min<int64_t>(rows, kMaxTaskM) / 4 * 4;
  while (rows >= 4 && !fits_cbuf(d, uint32_t(rows), uint32_t(ks))) rows -= 4;
  return rows >= 4 ? rows : 1;
}

GeneratorFaults& generator_faults() {
  static GeneratorFaults faults;
  return faults;
}

}  // namespace ork::npu
