// The DMA probe: how much NPU address space each IOMMU domain really gives, measured by allocating
// equal chunks until the kernel refuses (on the board: 63 x 64 MiB, errno 14, per domain).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npu/device.h"

namespace ork::npu {

struct DmaProbeDomain {
  uint32_t id = 0;
  uint64_t buffers = 0;  // chunks that mapped before the first failure
  uint64_t bytes = 0;    // their bytes (page-rounded sizes)
  int err = 0;           // errno of the failure; 0 if the probe stopped at its cap without failing
};

struct DmaProbeResult {
  uint64_t chunk_bytes = 0;
  std::vector<DmaProbeDomain> domains;
  uint64_t total_bytes = 0;
  // {"domains":[{"id":0,"buffers":63,"bytes":4227858432,"errno":14},...],"total_bytes":...,
  //  "chunk_bytes":67108864}
  std::string to_json() const;
};

// Fills domains 0..n_domains-1 in turn with chunk_bytes buffers until an allocation fails (all
// domains stay filled at once, so their independence is part of the measurement), records each,
// then frees everything. Stops a domain without failure after window/chunk + 1 buffers.
// Throws ork::Error when chunk_bytes is 0 or n_domains is 0 or exceeds the device's domains.
DmaProbeResult probe_dma(Device& device, uint64_t chunk_bytes = uint64_t(64) << 20, uint32_t n_domains = 1);

}  // namespace ork::npu
