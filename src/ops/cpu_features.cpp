#include "ops/cpu_features.h"

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace ork::ops {

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512Vnni: return "avx512vnni";
    case Isa::kNeonDot: return "neon-dotprod";
  }
  return "?";
}

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return true;
#if defined(__x86_64__)
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
    case Isa::kAvx512Vnni:
      return isa_supported(Isa::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512vnni");
#endif
#if defined(__aarch64__) && defined(__linux__)
    case Isa::kNeonDot: return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
    default: return false;
  }
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni, Isa::kNeonDot})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

Isa best_isa() {
  static const Isa best = supported_isas().back();
  return best;
}

}  // namespace ork::ops
