// Ring KV caches for sliding-window layers (EngineOptions::swa_ring): such a layer's cache keeps
// only the rows its window can still read, instead of the whole context.
//
// A layer with window w evaluated in chunks of at most m_max tokens reads, for a chunk at pos0, keys
// pos0 − w + 1 .. pos0 + n − 1 while writing its own n rows: w + m_max − 1 rows hold all of them.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/kv_type.h"

namespace ork::runtime {

// [layer] ring rows: min(n_ctx, window + m_max − 1) for sliding-window layers, 0 (full) for global
// ones and when that bound reaches n_ctx.
std::vector<int64_t> swa_ring_rows(const model::Config& c, int64_t n_ctx, int64_t m_max);

// Bytes of one context's K and V with those rings (kv_cache_bytes with every layer full otherwise).
uint64_t kv_cache_bytes_ring(const model::Config& c, int64_t n_ctx, model::KvType type, int64_t m_max);

}  // namespace ork::runtime
