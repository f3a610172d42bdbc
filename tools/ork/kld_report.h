// How `ork perplexity --kl-divergence` prints a runtime::KldSummary: text lines (llama.cpp's
// quantities, one line per group) or fields of the --json object.
#pragma once

#include <cstdint>

#include "core/json.h"
#include "runtime/kl_divergence.h"

namespace ork::cli {

// Four lines on stdout: PPL(Q) and PPL(base); their ratio and difference; KLD; same top / dp.
void print_kld_text(const runtime::KldSummary& s, int64_t n_chunk, int64_t n_ctx);
// The summary's fields into an open JSON object (ppl, ppl_base, dppl, kld_mean, same_top, ...).
void add_kld_json(JsonWriter& j, const runtime::KldSummary& s);

}  // namespace ork::cli
