// Decode (M = 1) over two consecutive tiles at once, for the panel types stored in pairs
// (qpanels.h: one tile = one pair of panels = one ascending stream). The kernel walks both tiles
// block by block — block b of the first, then block b of the second — so a thread reads two
// streams at once instead of one. On the AVX-512 VNNI development VM (docs/ops.md, "sixth
// session") a synthetic Q8_0 block loop read × 1.27–1.58 faster from DRAM that way (two threads),
// and the model's decode matmuls in Q8_0 × 1.05–1.09 (in-process A/B, 6 and 24 layers); Q4_0,
// which needs less of the memory's rate per unit of arithmetic, measured × 0.85–0.95 and has none.
// Each output gets exactly the one-tile kernel's operations, so the results are its bits.
//
// A kernel here is a PanelTileFn called with panels = panel p0 (even), np = 3 or 4 (panels p0 ..
// p0 + np − 1, the last pair's partner allocated even when past N), ncol = the valid outputs of
// those panels (> 32), nx = 1, and y = the outputs of panel p0. Thread-safety: stateless.
#pragma once

#include "ops/cpu_features.h"
#include "ops/qpanels.h"
#include "quant/types.h"

namespace ork::ops {

// The two-tile decode kernel of `isa` for `type`, or null when there is none (every ISA but
// AVX-512 VNNI, every type but Q8_0): run_panel_jobs then calls the one-tile kernel per tile.
PanelTileFn panel_two_tiles_kernel(quant::Type type, Isa isa);
const PanelKernels* panel_two_tiles_avx512vnni();  // q8_0 only; null when not built for x86-64

}  // namespace ork::ops
