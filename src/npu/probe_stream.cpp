#include "npu/probe_stream.h"

#include <algorithm>
#include <vector>

#include "core/json.h"
#include "npu/layout.h"
#include "npu/matmul.h"

namespace ork::npu {

namespace {

constexpr int64_t kStreamK = k_segment_width(Dtype::kI8);  // one K segment: each 32-row group is contiguous

int8_t weight_value(int64_t r, int64_t c) { return int8_t((r * 131 + c * 29 + (r ^ c)) % 253 - 126); }

// Packs the deterministic n × kStreamK weight into dst, one 32-row group at a time.
void pack_stream_weight(int64_t n, uint8_t* dst) {
  std::vector<int8_t> rows(size_t(32 * kStreamK));
  const int64_t kp = pad_k(kStreamK);
  for (int64_t g = 0; g * 32 < n; ++g) {
    const int64_t cnt = std::min<int64_t>(32, n - g * 32);
    for (int64_t r = 0; r < cnt; ++r)
      for (int64_t c = 0; c < kStreamK; ++c) rows[size_t(r * kStreamK + c)] = weight_value(g * 32 + r, c);
    pack_weight_into(rows.data(), cnt, kStreamK, dst + uint64_t(g) * 32 * uint64_t(kp));
  }
}

bool verify_stream_weight(int64_t n, const uint8_t* packed) {
  const int64_t np = pad_n(n, Dtype::kI8), kp = pad_k(kStreamK);
  for (int64_t r = 0; r < n; r += 61)
    for (int64_t c = 0; c < kStreamK; ++c)
      if (int8_t(packed[b_index(r, c, np, kp, Dtype::kI8)]) != weight_value(r, c)) return false;
  return true;
}

}  // namespace

StreamProbeResult probe_stream(Device& dev, uint64_t iters, uint64_t bytes, uint32_t domain) {
  ORK_CHECK(iters > 0, "probe_stream: iters must be positive");
  ORK_CHECK(bytes >= uint64_t(32 * kStreamK), "probe_stream: bytes ", bytes, " below one 32 × ",
            kStreamK, " weight");
  const int64_t n = int64_t(bytes / kStreamK) / 32 * 32;
  StreamProbeResult r;
  r.iters = iters;
  const uint64_t before = dev.counters().total_mapped_bytes;
  for (uint64_t it = 0; it < iters; ++it) {
    PackedWeight w;
    w.n = n, w.k = kStreamK, w.dtype = Dtype::kI8;
    w.buf = dev.alloc(packed_weight_bytes(n, kStreamK, Dtype::kI8), domain);
    const uint64_t size = packed_weight_bytes(n, kStreamK, Dtype::kI8);
    if (it == 0) {
      pack_stream_weight(n, w.buf.host());
      w.buf.sync_to_device(0, size);
      r.verified = verify_stream_weight(n, w.buf.host());
      ORK_CHECK(r.verified, "probe_stream: packed weight does not match the layout formula");
      r.weight_bytes = w.buf.size();
    } else {
      for (uint64_t off = 0; off < size; off += uint64_t(1) << 20) w.buf.host()[off] = uint8_t(it);
      w.buf.sync_to_device(0, size);
    }
    r.peak_resident_bytes =
        std::max(r.peak_resident_bytes, dev.counters().total_mapped_bytes - before);
    r.bytes_cycled += w.buf.size();
    w.buf.reset();  // destroy: the IOVA returns to the domain
  }
  const uint64_t after = dev.counters().total_mapped_bytes;
  r.leaked_iova_bytes = after > before ? after - before : 0;
  return r;
}

std::string StreamProbeResult::to_json() const {
  JsonWriter j;
  j.begin_object();
  j.key("iters").value(iters);
  j.key("bytes_cycled").value(bytes_cycled);
  j.key("peak_resident_bytes").value(peak_resident_bytes);
  j.key("leaked_iova_bytes").value(leaked_iova_bytes);
  j.key("weight_bytes").value(weight_bytes);
  j.key("verified").value(verified);
  j.end_object();
  return j.str();
}

}  // namespace ork::npu
