// The C API's speculative decoding: ork_generate_speculative over runtime::generate_speculative.
#include <memory>
#include <optional>
#include <vector>

#include "api/handles.h"
#include "runtime/draft_model.h"
#include "runtime/prompt_lookup.h"
#include "runtime/speculative.h"

using namespace ork;
using namespace ork::api;

extern "C" {

void ork_speculative_options_init(ork_speculative_options* o) {
  if (o == nullptr) return;
  *o = ork_speculative_options{};
  o->draft_max = 8;
}

int ork_generate_speculative(ork_context* ctx, ork_sampler* s, const ork_speculative_options* opts,
                             const int32_t* prompt, int64_t n_prompt, int64_t n_predict, int32_t* out,
                             int64_t capacity, int64_t* n_out, ork_token_callback on_token, void* user,
                             ork_speculative_stats* stats) {
  return guard(ORK_ERR_INTERNAL, [&] {
    auto c = contexts().get(ctx, "context");
    auto so = samplers().get(s, "sampler");
    if (opts == nullptr) fail_status(ORK_ERR_INVALID_ARG, "speculative options is NULL");
    if (n_out == nullptr) fail_status(ORK_ERR_INVALID_ARG, "n_out is NULL");
    if (prompt == nullptr) fail_status(ORK_ERR_INVALID_ARG, "prompt is NULL");
    if (n_predict < 0) fail_status(ORK_ERR_INVALID_ARG, "n_predict ", n_predict, " is negative");
    if (capacity < 0) fail_status(ORK_ERR_INVALID_ARG, "capacity ", capacity, " is negative");
    if (capacity > 0 && out == nullptr) fail_status(ORK_ERR_INVALID_ARG, "out is NULL");
    if (opts->draft_max < 1) fail_status(ORK_ERR_INVALID_ARG, "draft_max ", opts->draft_max, " must be >= 1");
    if (opts->draft_min < 0 || opts->draft_min > opts->draft_max) {
      fail_status(ORK_ERR_INVALID_ARG, "draft_min ", opts->draft_min, " must be in [0, draft_max ", opts->draft_max, "]");
    }
    if (!(opts->draft_p_min >= 0.0f && opts->draft_p_min <= 1.0f)) {
      fail_status(ORK_ERR_INVALID_ARG, "draft_p_min ", opts->draft_p_min, " must be in [0, 1]");
    }
    if (opts->draft == nullptr && opts->lookup_n <= 0) {
      fail_status(ORK_ERR_INVALID_ARG, "speculative options: give a draft context or lookup_n > 0");
    }
    if (opts->draft == ctx) fail_status(ORK_ERR_INVALID_ARG, "the draft context is the target's own context");
    check_model_alive(*c);
    std::shared_ptr<ContextObj> d;
    if (opts->draft != nullptr) {
      d = contexts().get(opts->draft, "draft context");
      check_model_alive(*d);
    }
    // Two contexts: lock them in address order, so that two calls with swapped roles cannot deadlock.
    std::optional<ContextLock> first, second;
    ContextObj* a = c.get();
    ContextObj* b = d.get();
    if (b != nullptr && b < a) std::swap(a, b);
    first.emplace(*a);
    if (b != nullptr) second.emplace(*b);

    runtime::Context& rc = *c->ctx;
    if (rc.n_past() != 0) fail_status(ORK_ERR_INVALID_ARG, "generate: the context is not empty (ork_context_reset it)");
    if (n_prompt <= 0) fail_status(ORK_ERR_INVALID_ARG, "generate: the prompt is empty");
    if (n_prompt >= rc.n_ctx()) {
      fail_status(ORK_ERR_CONTEXT_FULL, "generate: the prompt of ", n_prompt, " tokens leaves no room in the context of ",
                  rc.n_ctx(), " tokens");
    }
    for (int64_t i = 0; i < n_prompt; ++i) {
      if (prompt[i] < 0 || prompt[i] >= rc.n_vocab()) {
        fail_status(ORK_ERR_INVALID_ARG, "token ", i, " is ", prompt[i], ", outside the vocabulary [0, ", rc.n_vocab(), ")");
      }
    }
    std::unique_ptr<runtime::DraftSource> source;
    if (d != nullptr) {
      try {
        runtime::check_draft_vocab(rc.engine().model(), d->ctx->engine().model());
      } catch (const Error& e) {
        fail_status(ORK_ERR_INVALID_ARG, e.what());
      }
      if (d->ctx->n_ctx() < rc.n_ctx()) {
        fail_status(ORK_ERR_INVALID_ARG, "the draft context holds ", d->ctx->n_ctx(), " tokens, the target's ", rc.n_ctx());
      }
      source = std::make_unique<runtime::DraftModel>(*d->ctx, so->sampler->params(), opts->draft_p_min);
    } else {
      source = std::make_unique<runtime::PromptLookup>(opts->lookup_n);
    }
    runtime::SpeculativeOptions o;
    o.draft_max = opts->draft_max;
    o.draft_min = opts->draft_min;
    const std::vector<int32_t> p(prompt, prompt + n_prompt);
    int64_t count = 0;
    const runtime::SpeculativeResult r =
        runtime::generate_speculative(rc, *source, *so->sampler, p, n_predict, o, [&](int32_t id) {
          if (count < capacity) out[count] = id;
          ++count;
          return on_token == nullptr || on_token(id, user) == 0;
        });
    *n_out = count;
    if (stats != nullptr) {
      stats->target_passes = r.stats.target_passes;
      stats->drafted = r.stats.drafted;
      stats->accepted = r.stats.accepted;
      stats->generated = r.stats.generated;
      stats->draft_ms = r.stats.draft_ms;
      stats->verify_ms = r.stats.verify_ms;
      stats->bytes_streamed = r.stats.bytes_streamed;
    }
    if (count > capacity) {
      fail_status(ORK_ERR_BUFFER_TOO_SMALL, "generate: ", count, " tokens generated, the buffer holds ", capacity);
    }
    return ORK_OK;
  });
}

}  // extern "C"
