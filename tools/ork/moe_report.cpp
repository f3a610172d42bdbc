#include "moe_report.h"

#include <cstdio>
#include <string>

#include "weights/plan.h"

namespace ork::cli {

void print_moe_stats(const runtime::Engine& engine, const model::MoeStats& s) {
  const model::Config& c = engine.model().config();
  const double tokens = c.n_layer > 0 ? double(s.layer_tokens) / double(c.n_layer) : 0.0;
  uint64_t slices = 0;
  for (const model::LayerWeights& l : engine.model().weights().layers) slices += 3 * l.exp_gate.size();
  std::string where = "on the CPU";
  if (const weights::Plan* p = engine.plan(); p != nullptr) {
    where = p->mode == weights::Residency::kResident
                ? "resident in " + std::to_string(p->domains_used) + " IOMMU domain(s)"
                : "streamed through one domain";
  }
  std::fprintf(stderr,
               "ork: experts: %lld per layer, %lld used; %llu expert products for %.0f tokens x %lld layers; "
               "expert weights read %.1f KB per token (only the experts that ran); decode expert guess hit "
               "rate %.1f%% (%lld slots per layer; always-miss baseline 0%%), %llu wasted guesses; %llu expert "
               "slices %s\n",
               (long long)c.n_expert, (long long)c.n_expert_used, (unsigned long long)s.expert_runs, tokens,
               (long long)c.n_layer, tokens > 0 ? double(s.expert_bytes) / tokens / 1e3 : 0.0,
               100.0 * s.prediction.hit_rate(), (long long)c.n_expert_used,
               (unsigned long long)s.prediction.wasted(), (unsigned long long)slices, where.c_str());
  const weights::Plan* p = engine.plan();
  if (p == nullptr || p->mode != weights::Residency::kStream) return;
  const runtime::ResidencyStats r = engine.residency_stats();
  const std::string slots = p->expert_slot_bytes > 0
                                ? "expert-sized slots: " + std::to_string(p->expert_slots) + " of " +
                                      std::to_string(p->expert_slot_bytes) + " bytes"
                                : std::string("experts tiled (an expert exceeds budget / (cores + 1))");
  std::fprintf(stderr,
               "ork: expert streaming: %s; routed prefetch: %llu hits, %llu late, %llu misses, %llu wasted "
               "(%llu bytes)\n",
               slots.c_str(), (unsigned long long)r.prefetch_hits, (unsigned long long)r.prefetch_late,
               (unsigned long long)r.prefetch_misses, (unsigned long long)r.prefetch_wasted,
               (unsigned long long)r.prefetch_wasted_bytes);
  if (r.modeled && r.modeled_experts.acquires > 0) {
    const weights::ModeledRoutedStats& x = r.modeled_experts;
    std::fprintf(stderr,
                 "ork: expert units on the device (MODELED board time, --expert-prefetch %s): %llu acquires, "
                 "%llu reused, of %llu loads %llu ready (hit rate %.1f%%), %llu late, %llu misses; %llu wasted "
                 "guess loads (%llu bytes)\n",
                 r.expert_prefetch.c_str(), (unsigned long long)x.acquires, (unsigned long long)x.reused,
                 (unsigned long long)x.loads(), (unsigned long long)x.hits, 100.0 * x.hit_rate(),
                 (unsigned long long)x.late, (unsigned long long)x.misses, (unsigned long long)x.wasted,
                 (unsigned long long)x.wasted_bytes);
  }
}

}  // namespace ork::cli
