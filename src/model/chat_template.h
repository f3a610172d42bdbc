// model::ChatTemplate — turns a conversation into the prompt text an instruct model was trained on.
//
// ork does not run Jinja. Like llama.cpp's llm_chat_detect_template, it recognizes the family of a
// GGUF's `tokenizer.chat_template` from marker strings in the template text, then renders that family
// in C++ — with the few per-model details the template text states (a default system prompt, the
// Llama 3.1 date header, DeepSeek-R1's "<think>" generation prompt) read from that text. The output
// equals the template's own Jinja output for the families below (tests/model/chat_template_test.cpp
// compares against python3-jinja2 on the real templates; docs/chat.md lists the rules).
//
// Families (names for --chat-template, as llama.cpp names them): chatml, llama3, llama2 (Mistral
// v0.2 "[INST]"), llama2-sys-bos, llama2-sys-strip (Llama 2 "<<SYS>>" variants), mistral-v1,
// mistral-v3, mistral-v3-tekken, mistral-v7, gemma, phi3, deepseek (deepseek-coder), deepseek2,
// deepseek3, ork-fortunes (the default model's). Templates of other families llama.cpp knows are
// recognized by name and refused with an error naming them; text that matches no family is refused.
//
// Thread-safety: immutable after construction; render() may be called concurrently.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ork::model {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

class ChatTemplate {
 public:
  // Detects the family of `jinja` (a tokenizer.chat_template). bos/eos: the texts of the vocabulary's
  // BOS and EOS tokens ("" when it has none). Throws ork::Error naming the detected family when ork
  // cannot render it, or saying that no family matched.
  static ChatTemplate detect(std::string_view jinja, std::string bos, std::string eos);
  // The family named `name` (--chat-template), in its plain form (no default system prompt, no
  // Llama 3.1 header). Throws ork::Error naming `name` and listing the known names.
  static ChatTemplate named(std::string_view name, std::string bos, std::string eos);
  // The names named() accepts.
  static std::vector<std::string> names();

  // The prompt text for `messages` (roles system, user, assistant; anything else → ork::Error naming
  // the role and the message index). add_generation_prompt: end with the opening of an assistant
  // turn. Families without a system role (llama2, gemma) merge a leading system message into the
  // first user message as "SYSTEM\n\nUSER"; they need user/assistant turns to alternate starting with
  // a user (ork::Error otherwise), as their templates do.
  std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

  const std::string& name() const { return name_; }
  // Texts that end an assistant turn in this family (e.g. "<|im_end|>"); generation stops at a token
  // whose text is one of them, and at the tokenizer's end-of-generation tokens.
  const std::vector<std::string>& stop_strings() const { return stops_; }
  // True when render() writes the BOS text itself (the prompt must then not get a second BOS).
  bool renders_bos() const;

 private:
  enum class Family {
    kChatml, kLlama3, kLlama2, kLlama2SysBos, kLlama2SysStrip, kMistralV1, kMistralV3, kMistralV3Tekken,
    kMistralV7, kGemma, kPhi3, kDeepseek, kDeepseek2, kDeepseek3, kFortunes
  };
  // The families whose rendering is a few lines each (mistral-*, llama2-sys-*, deepseek, deepseek2).
  std::string render_more(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
  ChatTemplate(Family f, std::string name, std::string bos, std::string eos);

  Family family_;
  std::string name_;
  std::string bos_, eos_;
  std::vector<std::string> stops_;
  // Per-model details read from the template text (see detect()).
  std::string default_system_;  // chatml, llama2-sys-strip, deepseek: system prompt used when the
                                // conversation has none
  std::string date_header_;     // llama3.1: "Cutting Knowledge Date: ...\nToday Date: ...\n\n"
  bool think_prompt_ = false;   // deepseek3: generation prompt opens "<think>\n"
  bool think_closed_ = false;   // deepseek3: ... and closes it again ("</think>", enable_thinking unset)
  bool eos_without_prompt_ = false;  // phi3: eos_token ends the text when add_generation_prompt is off
};

}  // namespace ork::model
