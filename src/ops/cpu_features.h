// CPU instruction-set levels the SIMD kernels are built for, detected at run time.
//
// The kernels of each level live in their own translation unit compiled for that level (see
// qkernels.h); the binary itself targets the baseline ISA, so it runs on any CPU of its
// architecture and picks the best level the CPU reports. Thread-safety: pure / immutable.
#pragma once

#include <string_view>
#include <vector>

// On x86-64 Linux, a function marked ORK_VECTOR_CLONES is also compiled for AVX2 and the version
// the CPU can run is picked when the program loads (GCC target_clones). Only for code whose result
// does not depend on the vector width: per-element IEEE operations in a fixed order (no FMA
// contraction: the build passes -ffp-contract=off), exact reductions such as max, or reductions
// with a fixed lane layout (vec.h).
// Not under ThreadSanitizer: its runtime is not ready when the loader runs ifunc resolvers.
// ORK_FMA_CLONES: the same with an FMA clone (AVX + FMA) instead, for code whose multiply-adds are
// std::fma (__builtin_fmaf): one rounding, so every ISA gives the same bits — as vfmadd in the FMA
// clone and fmla on aarch64, and as the C library's fmaf (slow, exact) in the baseline clone.
#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_THREAD__)
#define ORK_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#define ORK_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define ORK_VECTOR_CLONES
#define ORK_FMA_CLONES
#endif

namespace ork::ops {

enum class Isa {
  kScalar,      // portable C++ (the reference every other level is tested against)
  kAvx2,        // x86-64: AVX2 + FMA + F16C
  kAvx512Vnni,  // x86-64: kAvx2 plus AVX-512 F/BW/VL/VNNI (256-bit vectors, vpdpbusd)
  kNeonDot,     // aarch64: Advanced SIMD with the dot-product extension (sdot)
};

std::string_view isa_name(Isa isa);

// Whether this binary has kernels for `isa` and this CPU can run them.
bool isa_supported(Isa isa);

// Every supported level, scalar first.
std::vector<Isa> supported_isas();

// The fastest supported level (computed once).
Isa best_isa();

}  // namespace ork::ops
