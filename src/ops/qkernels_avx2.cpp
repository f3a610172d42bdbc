// Isa::kAvx2 kernels (AVX2 + FMA + F16C); the code is in qkernels_x86.inc.
#include "ops/qkernels.h"

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#pragma GCC optimize("fp-contract=off")  // f16: vec::dot's separate multiply and add
#define ORK_X86_VNNI 0
#include "ops/qkernels_x86.inc"
#pragma GCC pop_options

namespace ork::ops {
const QKernels* qkernels_avx2() { return &kTable; }
}  // namespace ork::ops
#else
namespace ork::ops {
const QKernels* qkernels_avx2() { return nullptr; }
}  // namespace ork::ops
#endif
