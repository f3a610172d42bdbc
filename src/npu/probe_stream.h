// The streaming probe (the seed's tools/stream_probe.c): pack a weight of `bytes`, free it, repeat,
// and show from the Device counters that IOVA comes back — many times the 4 GiB window cycled, the
// resident peak bounded by one weight, nothing leaked.
//
// Speed: the first iteration packs real, deterministic int8 data (an N × 4096 weight, group by group)
// and verifies the packed bytes at every 61st row against the layout formula; later iterations
// allocate the same size, write one stamp per 1 MiB (so every allocation is really mapped and
// written, without packing 268 MB a hundred times), sync and free.
#pragma once

#include <cstdint>
#include <string>

#include "npu/device.h"

namespace ork::npu {

struct StreamProbeResult {
  uint64_t iters = 0;
  uint64_t weight_bytes = 0;        // device bytes per weight (packed size)
  uint64_t bytes_cycled = 0;        // iters · weight_bytes
  uint64_t peak_resident_bytes = 0; // max mapped bytes seen while a weight was live, minus baseline
  uint64_t leaked_iova_bytes = 0;   // mapped bytes after the probe minus before
  bool verified = false;            // the first iteration's packed bytes matched the formula
  // {"iters":…,"bytes_cycled":…,"peak_resident_bytes":…,"leaked_iova_bytes":…,"weight_bytes":…,
  //  "verified":true}
  std::string to_json() const;
};

// Throws ork::Error when iters is 0, bytes < 4096·32, or an allocation fails (AllocError).
StreamProbeResult probe_stream(Device& dev, uint64_t iters = 100, uint64_t bytes = uint64_t(256) << 20,
                               uint32_t domain = 0);

}  // namespace ork::npu
