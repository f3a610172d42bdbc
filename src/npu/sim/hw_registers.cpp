#include "npu/sim/hw_registers.h"

namespace ork::npu::sim {

namespace {

struct Row {
  Hw id;
  uint16_t target, offset;
  const char* name;
};
constexpr Row kRows[] = {
#define ORK_SIM_HW_ROW(N, T, O) Row{Hw::N, T, O, #N},
    ORK_SIM_HW_REGISTERS(ORK_SIM_HW_ROW)
#undef ORK_SIM_HW_ROW
};
static_assert(sizeof(kRows) / sizeof(kRows[0]) == kHwCount);

}  // namespace

bool find_hw(uint16_t target, uint16_t offset, Hw* out) {
  for (const Row& r : kRows) {
    if (r.target == target && r.offset == offset) {
      *out = r.id;
      return true;
    }
  }
  return false;
}

const char* hw_name(Hw r) { return kRows[size_t(r)].name; }

}  // namespace ork::npu::sim
