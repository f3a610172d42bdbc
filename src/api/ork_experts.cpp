// The C API's expert query: ork_expert_info_init, ork_query_experts (include/ork/ork.h). The struct
// grows by appending fields; a caller's struct_size says how many bytes of it to fill.
#include <algorithm>
#include <cstring>

#include "api/handles.h"
#include "weights/packed.h"
#include "weights/plan.h"

using namespace ork;
using namespace ork::api;

namespace {

void fill_model(runtime::Engine& e, ork_expert_info& info) {
  const model::Config& c = e.model().config();
  if (!c.is_moe()) return;
  const std::vector<model::LayerWeights>& layers = e.model().weights().layers;
  const model::LayerWeights* first = nullptr;
  for (const model::LayerWeights& l : layers) {
    if (l.router == nullptr) continue;
    ++info.n_moe_layers;
    if (first == nullptr) first = &l;
  }
  if (first == nullptr) return;
  info.n_expert = uint32_t(c.n_expert);
  info.n_expert_used = uint32_t(c.n_expert_used);
  info.experts_total = uint64_t(info.n_moe_layers) * uint64_t(c.n_expert);
  const weights::Plan* p = e.plan();
  for (const model::Linear* w : {&first->exp_gate[0], &first->exp_up[0], &first->exp_down[0]}) {
    info.expert_bytes += p != nullptr ? weights::packed_bytes(w->n, w->k, p->wtype) : w->w->n_bytes;
  }
  if (p == nullptr) {
    info.placement = ORK_EXPERTS_CPU;
    return;
  }
  if (p->mode == weights::Residency::kResident) {
    info.placement = ORK_EXPERTS_RESIDENT;
    info.resident_domains = p->domains_used;
    info.experts_resident = info.experts_total;
    return;
  }
  info.placement = ORK_EXPERTS_STREAMED;
  info.experts_streamed = info.experts_total;
  info.expert_slot_bytes = p->expert_slot_bytes;
  info.expert_slots = p->expert_slots;
  const weights::Cache* cache = e.cache();
  for (const weights::ExpertBlock& b : p->expert_blocks) {
    for (size_t x = 0; x + 1 < b.expert_first.size(); ++x) {
      bool all = true;
      for (int32_t u = b.expert_first[x]; u < b.expert_first[x + 1] && all; ++u) all = cache->is_loaded(u);
      info.experts_resident += all;
    }
  }
}

}  // namespace

extern "C" {

void ork_expert_info_init(ork_expert_info* info) {
  if (info == nullptr) return;
  *info = ork_expert_info{};
  info->struct_size = uint32_t(sizeof(ork_expert_info));
}

int ork_query_experts(const ork_model* model, const ork_context* ctx, ork_expert_info* out) {
  return guard(ORK_ERR_INTERNAL, [&] {
    if ((model == nullptr) == (ctx == nullptr)) {
      fail_status(ORK_ERR_INVALID_ARG, "ork_query_experts: give exactly one of model and ctx");
    }
    if (out == nullptr) fail_status(ORK_ERR_INVALID_ARG, "out is NULL");
    const uint32_t asked = out->struct_size;
    if (asked < 8) {
      fail_status(ORK_ERR_INVALID_ARG, "ork_query_experts: out->struct_size ", asked,
                  " is below 8 (set it to sizeof(ork_expert_info), e.g. with ork_expert_info_init)");
    }
    ork_expert_info info{};
    if (model != nullptr) {
      auto m = models().get(model, "model");
      fill_model(*m->engine, info);
    } else {
      auto c = contexts().get(ctx, "context");
      check_model_alive(*c);
      ContextLock lock(*c);
      fill_model(*c->model->engine, info);
      const model::MoeStats* s = c->ctx->moe_stats();
      if (s != nullptr && info.n_moe_layers > 0) {
        info.tokens_routed = s->layer_tokens / info.n_moe_layers;
        info.expert_runs = s->expert_runs;
        info.expert_bytes_read = s->expert_bytes;
      }
    }
    const uint32_t n = std::min<uint32_t>(asked, uint32_t(sizeof(ork_expert_info)));
    info.struct_size = n;
    std::memcpy(out, &info, n);
    return ORK_OK;
  });
}

}  // extern "C"
