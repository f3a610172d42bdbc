#include "serve/generation.h"

#include <algorithm>
#include <optional>

#include "core/error.h"

namespace ork::serve {
namespace {

// Length of the longest suffix of `s` that is a proper prefix of some stop string.
size_t held_back(const std::string& s, const std::vector<std::string>& stops) {
  size_t keep = 0;
  for (const std::string& st : stops) {
    for (size_t n = std::min(st.size() - 1, s.size()); n > keep; --n) {
      if (s.compare(s.size() - n, n, st, 0, n) == 0) {
        keep = n;
        break;
      }
    }
  }
  return keep;
}

// Length of the prefix of `s` that ends on a whole UTF-8 character (an incomplete multi-byte
// sequence at the end is held back until its last byte arrives).
size_t utf8_complete(const std::string& s) {
  size_t i = s.size();
  for (size_t back = 0; back < 4 && i > 0; ++back) {
    const unsigned char c = static_cast<unsigned char>(s[i - 1]);
    if ((c & 0xC0) != 0x80) {  // a lead byte (or ASCII): is its sequence complete?
      const size_t need = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
      return back + 1 >= need ? s.size() : i - 1;
    }
    --i;
  }
  return s.size();  // not UTF-8 anyway: nothing to wait for
}

}  // namespace

GenResult generate_on_slot(Slot& slot, const std::vector<int32_t>& prompt, const GenParams& p,
                           const std::function<bool(const std::string&)>& on_delta,
                           runtime::DecodeBatcher* batcher) {
  runtime::Context& ctx = *slot.ctx;
  const model::Tokenizer& tok = ctx.engine().model().tokenizer();
  ORK_CHECK(!prompt.empty() && int64_t(prompt.size()) < ctx.n_ctx(), "prompt of ", prompt.size(),
            " tokens does not fit the context of ", ctx.n_ctx());
  std::vector<int32_t> stop_ids;
  for (const std::string& s : p.stop_texts) {
    const int32_t id = tok.find_token(s);
    if (id >= 0) stop_ids.push_back(id);
  }
  GenResult r;
  r.n_prompt = int64_t(prompt.size());
  size_t keep = 0;
  const std::vector<int32_t>& cached = slot.cached;
  while (keep < cached.size() && keep + 1 < prompt.size() && cached[keep] == prompt[keep]) ++keep;
  keep = size_t(ctx.keepable(std::min<int64_t>(int64_t(keep), ctx.n_past())));  // a ring may not reach back
  r.n_reused = int64_t(keep);
  ctx.truncate(int64_t(keep));
  slot.cached.resize(keep);
  runtime::Sampler sampler(p.sampler);
  for (int32_t t : prompt) sampler.accept(t);
  const float* logits = ctx.eval(std::vector<int32_t>(prompt.begin() + int64_t(keep), prompt.end()));
  slot.cached = prompt;
  std::optional<runtime::DecodeBatcher::Member> member;
  std::vector<float> step_logits;
  if (batcher != nullptr) {
    member.emplace(batcher->join());
    step_logits.resize(size_t(ctx.n_vocab()));
  }

  std::string text;     // everything generated so far (stop strings not cut yet)
  size_t emitted = 0;   // bytes of text handed to on_delta
  r.finish_reason = "length";
  for (int64_t i = 0; p.max_tokens < 0 || i < p.max_tokens; ++i) {
    const int32_t id = sampler.sample(logits, int32_t(ctx.n_vocab()));
    sampler.accept(id);
    ++r.n_gen;
    if (tok.is_eog(id) || std::find(stop_ids.begin(), stop_ids.end(), id) != stop_ids.end()) {
      r.finish_reason = "stop";
      break;
    }
    text += tok.decode_token(id);
    size_t cut = std::string::npos;
    for (const std::string& st : p.stop) {
      const size_t at = text.find(st, emitted > st.size() ? emitted - st.size() : 0);
      if (at != std::string::npos) cut = std::min(cut, at);
    }
    if (cut != std::string::npos) {
      text.resize(cut);
      r.finish_reason = "stop";
      break;
    }
    const size_t ready = std::min(text.size() - held_back(text, p.stop), utf8_complete(text));
    if (ready > emitted) {
      if (!on_delta(text.substr(emitted, ready - emitted))) {
        r.finish_reason = "disconnected";
        r.text = text;
        return r;
      }
      emitted = ready;
    }
    if (ctx.n_past() >= ctx.n_ctx()) break;
    if (p.max_tokens >= 0 && i + 1 == p.max_tokens) break;
    if (batcher != nullptr) {
      batcher->decode(ctx, id, step_logits.data());
      logits = step_logits.data();
    } else {
      logits = ctx.eval({id});
    }
    slot.cached.push_back(id);
  }
  if (text.size() > emitted && !on_delta(text.substr(emitted))) r.finish_reason = "disconnected";
  r.text = text;
  return r;
}

}  // namespace ork::serve
