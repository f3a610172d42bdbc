// CPU instruction-set levels the SIMD kernels are built for, detected at run time.
//
// The kernels of each level live in their own translation unit compiled for that level (see
// qkernels.h); the binary itself targets the baseline ISA, so it runs on any CPU of its
// architecture and picks the best level the CPU reports. Thread-safety: pure / immutable.
#pragma once

#include <string_view>
#include <vector>

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
