#include "mem_experts.h"

#include <cstdio>
#include <string>

#include "weights/packed.h"
#include "weights/plan.h"

namespace ork::cli {

void report_mem_experts(const runtime::Engine& engine, const runtime::Context& ctx, int64_t tokens, JsonWriter* j) {
  const model::Config& c = engine.model().config();
  const model::MoeStats* s = ctx.moe_stats();
  if (!c.is_moe() || s == nullptr) return;
  const model::LayerWeights& l0 = engine.model().weights().layers[0];
  const weights::Plan* p = engine.plan();
  uint64_t one = 0;  // bytes of one expert: device form on a device plan, GGUF on the CPU
  for (const model::Linear* w : {&l0.exp_gate[0], &l0.exp_up[0], &l0.exp_down[0]}) {
    one += p != nullptr ? weights::packed_bytes(w->n, w->k, p->wtype) : w->w->n_bytes;
  }
  std::string where = "cpu";
  if (p != nullptr) where = p->mode == weights::Residency::kResident ? "resident" : "streamed";
  const double per_token = tokens > 0 ? double(s->expert_bytes) / double(tokens) : 0.0;
  const uint64_t count = uint64_t(c.n_layer * c.n_expert);
  if (j != nullptr) {
    j->key("experts").begin_object();
    j->key("count").value(count);
    j->key("per_layer").value(uint64_t(c.n_expert));
    j->key("used_per_token").value(uint64_t(c.n_expert_used));
    j->key("expert_bytes").value(one);
    j->key("where").value(where);
    j->key("domains").value(uint64_t(p != nullptr && p->mode == weights::Residency::kResident ? p->domains_used : 0));
    j->key("expert_slot_bytes").value(p != nullptr ? p->expert_slot_bytes : 0);
    j->key("expert_slots").value(uint64_t(p != nullptr ? p->expert_slots : 0));
    j->key("expert_bytes_per_token").value(per_token);
    j->end_object();
    return;
  }
  std::printf("  experts               %llu (%lld layers x %lld, %lld used per token), %llu bytes each, %s",
              (unsigned long long)count, (long long)c.n_layer, (long long)c.n_expert, (long long)c.n_expert_used,
              (unsigned long long)one, where.c_str());
  if (p != nullptr && p->mode == weights::Residency::kResident) std::printf(" in %u domain(s)", p->domains_used);
  if (p != nullptr && p->mode == weights::Residency::kStream) {
    if (p->expert_slot_bytes > 0) {
      std::printf(": %u expert-sized slots of %llu bytes", p->expert_slots, (unsigned long long)p->expert_slot_bytes);
    } else {
      std::printf(": tiled (an expert exceeds budget / (cores + 1))");
    }
  }
  std::printf("\n  expert bytes / token  %.0f (GGUF bytes of the experts that ran, only those)\n", per_token);
}

}  // namespace ork::cli
