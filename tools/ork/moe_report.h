// `ork run --stats` for MoE models: what the experts did (model::MoeStats) and where they live.
#pragma once

#include "model/moe_ffn.h"
#include "runtime/engine.h"

namespace ork::cli {

// One line on stderr: experts per layer and used, products run, expert bytes read per token (GGUF
// bytes of the experts that ran, only those), the decode predictor's hit rate beside the
// always-miss baseline, and on a device plan whether the expert slices are resident or streamed.
void print_moe_stats(const runtime::Engine& engine, const model::MoeStats& s);

}  // namespace ork::cli
