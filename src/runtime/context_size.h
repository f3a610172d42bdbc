// The context size a Context gets when none is asked for, and the refusal when the one asked for
// does not fit in memory.
#pragma once

#include <cstdint>

#include "model/config.h"
#include "model/kv_type.h"

namespace ork::runtime {

// Bytes of the KV cache of n_ctx positions: K and V, every layer, one row of kv_dim values of `type`
// per position (model::kv_row_bytes: 4, 2 or 34/32 bytes a value). ork::Error when the type cannot
// hold the model's rows (q8_0 and kv_dim not a multiple of 32).
uint64_t kv_cache_bytes(const model::Config& c, int64_t n_ctx, model::KvType type = model::KvType::kF32);

// Bytes of the f32 copy of one layer's K and V that attention reads from an f16 or q8_0 cache of
// n_ctx positions (model::Forward::kv_staging_bytes at a full context): 2 · n_ctx · kv_dim · 4; 0 for f32.
uint64_t kv_staging_bytes(const model::Config& c, int64_t n_ctx, model::KvType type);

// MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read. Thread-safe (reads a file).
uint64_t available_memory_bytes();

// The context for a request of `requested` tokens (0 = the default) when `available` bytes of memory
// are free (0 = unknown), with half of them the budget of the KV cache of `type` and its staging:
//   requested > 0: requested, or ork::Error naming the KV bytes it needs, the budget and the largest
//                  context that fits, when it needs more than the budget;
//   requested == 0: the model's trained length (n_ctx_train), or when its KV cache exceeds the budget
//                  the largest multiple of 256 that fits (ork::Error with the numbers when not even
//                  256 positions do); min(n_ctx_train, 4096) when `available` is unknown.
// Contexts longer than n_ctx_train are allowed (the model's RoPE scaling decides what it is good for).
// Throws ork::Error for requested < 0 or > 2^24. Pure.
int64_t resolve_context(const model::Config& c, int64_t requested, uint64_t available,
                        model::KvType type = model::KvType::kF32);

}  // namespace ork::runtime
