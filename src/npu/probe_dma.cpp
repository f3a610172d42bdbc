#include "npu/probe_dma.h"

#include "core/json.h"

namespace ork::npu {

std::string DmaProbeResult::to_json() const {
  JsonWriter j;
  j.begin_object();
  j.key("domains").begin_array();
  for (const DmaProbeDomain& d : domains) {
    j.begin_object();
    j.key("id").value(d.id);
    j.key("buffers").value(d.buffers);
    j.key("bytes").value(d.bytes);
    j.key("errno").value(d.err);
    j.end_object();
  }
  j.end_array();
  j.key("total_bytes").value(total_bytes);
  j.key("chunk_bytes").value(chunk_bytes);
  j.end_object();
  return j.str();
}

DmaProbeResult probe_dma(Device& device, uint64_t chunk_bytes, uint32_t n_domains) {
  ORK_CHECK(chunk_bytes > 0, "dma probe: chunk size must be > 0");
  ORK_CHECK(n_domains >= 1 && n_domains <= device.caps().domains, "dma probe: ", n_domains,
            " domains requested, the device has ", device.caps().domains);
  const uint64_t cap = device.caps().window_bytes / chunk_bytes + 1;
  DmaProbeResult result;
  result.chunk_bytes = chunk_bytes;
  std::vector<Buffer> held;
  for (uint32_t id = 0; id < n_domains; ++id) {
    DmaProbeDomain d;
    d.id = id;
    while (d.buffers < cap) {
      try {
        held.push_back(device.alloc(chunk_bytes, id));
      } catch (const AllocError& e) {
        d.err = e.err();
        break;
      }
      d.buffers++;
      d.bytes += held.back().size();
    }
    result.total_bytes += d.bytes;
    result.domains.push_back(d);
  }
  held.clear();
  return result;
}

}  // namespace ork::npu
