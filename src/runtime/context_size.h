// The context size a Context gets when none is asked for, and the refusal when the one asked for
// does not fit in memory.
#pragma once

#include <cstdint>

#include "model/config.h"

namespace ork::runtime {

// Bytes of the KV cache of n_ctx positions: K and V, every layer, kv_dim f32 values per position.
uint64_t kv_cache_bytes(const model::Config& c, int64_t n_ctx);

// MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read. Thread-safe (reads a file).
uint64_t available_memory_bytes();

// The context for a request of `requested` tokens (0 = the default) when `available` bytes of memory
// are free (0 = unknown), with half of them the KV cache's budget:
//   requested > 0: requested, or ork::Error naming the KV bytes it needs, the budget and the largest
//                  context that fits, when it needs more than the budget;
//   requested == 0: the model's trained length (n_ctx_train), or when its KV cache exceeds the budget
//                  the largest multiple of 256 that fits (ork::Error with the numbers when not even
//                  256 positions do); min(n_ctx_train, 4096) when `available` is unknown.
// Contexts longer than n_ctx_train are allowed (the model's RoPE scaling decides what it is good for).
// Throws ork::Error for requested < 0 or > 2^24. Pure.
int64_t resolve_context(const model::Config& c, int64_t requested, uint64_t available);

}  // namespace ork::runtime
