#include "runtime/generator.h"

#include "core/error.h"
#include "core/timer.h"

namespace ork::runtime {

GenerateResult generate(Context& ctx, Sampler& sampler, const std::vector<int32_t>& prompt,
                        int64_t n_predict, const std::function<bool(int32_t)>& on_token) {
  ORK_CHECK(!prompt.empty(), "the prompt is empty (no tokens)");
  ORK_CHECK(n_predict >= 0, "number of tokens to predict ", n_predict, " is negative");
  ORK_CHECK(ctx.n_past() == 0, "generate needs an empty context");
  ORK_CHECK(int64_t(prompt.size()) < ctx.n_ctx(), "the prompt of ", prompt.size(),
            " tokens does not fit in the context of ", ctx.n_ctx(), " tokens (use --ctx)");
  const model::Tokenizer& tok = ctx.engine().model().tokenizer();

  GenerateResult r;
  r.n_prompt = int64_t(prompt.size());
  for (int32_t t : prompt) sampler.accept(t);

  Stopwatch sw;
  const float* logits = ctx.eval(prompt);
  r.prompt_ms = sw.elapsed_ms();
  sw.reset();
  for (int64_t i = 0; i < n_predict; ++i) {
    const int32_t id = sampler.sample(logits, int32_t(ctx.n_vocab()));
    sampler.accept(id);
    r.tokens.push_back(id);
    if (!on_token(id)) break;
    if (tok.is_eog(id)) {
      r.hit_eog = true;
      break;
    }
    if (i + 1 == n_predict) break;
    if (ctx.n_past() >= ctx.n_ctx()) {
      r.hit_ctx = true;
      break;
    }
    logits = ctx.eval({id});
  }
  r.gen_ms = sw.elapsed_ms();
  return r;
}

}  // namespace ork::runtime
