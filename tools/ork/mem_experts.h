// `ork mem` for MoE models: where the experts live and what one token reads of them.
#pragma once

#include "core/json.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::cli {

// Nothing for a dense model. Else, after `ctx` evaluated `tokens` tokens: experts (layers × per layer,
// used per token), the packed bytes of one expert (device form; GGUF bytes on the CPU), where they
// are (resident in N domains | streamed: expert-sized slots S of B bytes, or tiled | cpu), and the
// GGUF expert bytes read per token counting only the experts that ran. `j`: as an "experts" object
// (inside an open object); null: printed lines.
void report_mem_experts(const runtime::Engine& engine, const runtime::Context& ctx, int64_t tokens, JsonWriter* j);

}  // namespace ork::cli
