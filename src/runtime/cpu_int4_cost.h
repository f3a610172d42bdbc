// The board model's price of the CPU int4 path (runtime/cpu_int4_matmul.h) — the CPU side of a call
// of `--npu-wtype i4` that the hybrid schedule runs on the CPU or splits along N (runtime/schedule.h):
// as sim::cost_cpu_matmul_ns prices the int8 path, with the bytes the int4 kernel reads (its codes
// two per byte and one f32 scale per row) and its MACs at the profile's cpu_int8_gmacs (the codes
// are widened to int8 for the dot products: the same rate is an assumption, not a measurement).
// MODELED, never measured. Pure, thread-safe.
#pragma once

#include <cstdint>

#include "npu/sim/board_model.h"

namespace ork::runtime {

// Bytes the CPU int4 kernel reads for an (n × k) weight: n · ceil(k / 2) codes + 4 · n scales.
double cpu_int4_matmul_bytes(int64_t k, int64_t n);
// cpu_call_us + max(bytes / cpu_read_gbps, m·k·n / cpu_int8_gmacs), in ns.
double cost_cpu_int4_matmul_ns(const npu::sim::BoardProfile& p, int64_t m, int64_t k, int64_t n);

}  // namespace ork::runtime
