// weights::ExpertPrefetch — whether a streamed MoE model's decode loads the experts the predictor
// guesses for the next layer ahead of its router (docs/residency.md "Routed prefetch").
//   kPredict: model::ExpertPredictor's guess for layer l + 1 is named to the prefetcher while layer l
//             computes (the default);
//   kNone:    nothing of a layer's experts is named before its router runs — the always-miss baseline
//             the predictor is measured against. The router's exact list is named in both.
// Neither changes what is computed: only when expert weights come onto the device.
#pragma once

#include <string>

namespace ork::weights {

enum class ExpertPrefetch { kPredict, kNone };

// "predict" | "none"; throws ork::Error naming the text otherwise.
ExpertPrefetch parse_expert_prefetch(const std::string& text);
const char* expert_prefetch_name(ExpertPrefetch p);

}  // namespace ork::weights
