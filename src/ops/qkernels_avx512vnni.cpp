// Isa::kAvx512Vnni kernels: the AVX2 code with vpdpbusd/vpdpwssd on 256-bit vectors (AVX-512 VL)
// and the 32 vector registers of AVX-512 for larger tiles; the code is in qkernels_x86.inc.
#include "ops/qkernels.h"

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")
#pragma GCC optimize("fp-contract=off")  // f16: vec::dot's separate multiply and add
#define ORK_X86_VNNI 1
#include "ops/qkernels_x86.inc"
#pragma GCC pop_options

namespace ork::ops {
const QKernels* qkernels_avx512vnni() { return &kTable; }
}  // namespace ork::ops
#else
namespace ork::ops {
const QKernels* qkernels_avx512vnni() { return nullptr; }
}  // namespace ork::ops
#endif
