// runtime::ChatSession — a multi-turn conversation on one Context. It keeps the messages and the
// tokens its KV cache holds; each turn renders the whole conversation with the ChatTemplate,
// tokenizes it, keeps the cached prefix that matches and evaluates only the rest (the history is
// not prefilled again). Sessions save to and load from a file (KV cache + messages), validated.
//
// Borrows the Context (must outlive the session). Thread-safety: none; one thread per session.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/chat_template.h"
#include "runtime/context.h"
#include "runtime/sampler.h"

namespace ork::runtime {

struct ChatReply {
  std::string text;           // the reply (the stop token's text left out)
  int64_t n_prompt = 0;       // tokens of the rendered conversation
  int64_t n_reused = 0;       // ... of which were already in the KV cache
  int64_t n_gen = 0;          // tokens generated (the stop token included)
  std::string stop;           // "eog" (end-of-turn token), "length", "context", "interrupted"
};

class ChatSession {
 public:
  ChatSession(Context& ctx, model::ChatTemplate tmpl);

  // Appends a user message and generates the assistant's reply, which is appended too (also when
  // interrupted: the part generated so far). on_piece gets each piece of text as it is decoded;
  // returning false stops the reply ("interrupted"). n_predict < 0: until a stop or a full context.
  // Throws ork::Error when the conversation does not fit the context (the user message is then
  // removed again, the session unchanged).
  ChatReply reply(const std::string& user, Sampler& sampler, int64_t n_predict,
                  const std::function<bool(const std::string&)>& on_piece);

  // Forgets the messages and the cache; `system` (when not empty) starts the new conversation.
  void clear(const std::string& system);

  // Writes the session to `path` atomically (PATH.tmp, then rename). Throws ork::Error naming path.
  void save(const std::string& path) const;
  // Replaces the session by the one in `path`; ork::Error naming path and the field at fault when it
  // is not a session file, is truncated, or was saved with another model, context size or template
  // (the session is then unchanged).
  void load(const std::string& path);

  const std::vector<model::ChatMessage>& messages() const { return messages_; }
  const model::ChatTemplate& chat_template() const { return tmpl_; }
  // The tokens in the KV cache (ctx.n_past() of them).
  const std::vector<int32_t>& cached_tokens() const { return cached_; }

 private:
  std::vector<int32_t> tokenize_prompt() const;
  bool is_stop(int32_t id) const;

  Context& ctx_;
  model::ChatTemplate tmpl_;
  std::vector<model::ChatMessage> messages_;
  std::vector<int32_t> cached_;
  std::vector<int32_t> stop_ids_;  // tokens whose text is one of the template's stop strings
};

}  // namespace ork::runtime

namespace ork::model {
class Model;
}

namespace ork::runtime {

// The chat template of `model`: the family named `name` (--chat-template) when not empty, else the
// one detected from its tokenizer.chat_template. ork::Error when the model has none and no name is
// given, or as ChatTemplate::detect/named throw.
model::ChatTemplate chat_template_for(const model::Model& model, const std::string& name);

}  // namespace ork::runtime
