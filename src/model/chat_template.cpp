#include "model/chat_template.h"

#include <utility>

#include "core/error.h"

namespace ork::model {
namespace {

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

// Python's str.strip() (Jinja's trim filter) on ASCII whitespace.
std::string trim(std::string_view s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(ws) - b + 1));
}

// The family llama.cpp's llm_chat_detect_template (src/llama-chat.cpp, llama.cpp of 2026-09-12)
// gives `t`, by its checks in its order, named as llama.cpp names them; "" when none matches. The
// checks after the last family ork renders are left out: they can only name families ork refuses.
std::string detect_name(std::string_view t) {
  auto has = [&](std::string_view s) { return contains(t, s); };
  if (has("ork-fortunes")) return "ork-fortunes";  // ork's own marker (models/README.md)
  if (has("<|im_start|>")) {
    return has("<|im_sep|>") ? "phi4" : has("<end_of_utterance>") ? "smolvlm" : "chatml";
  }
  if (t.substr(0, 7) == "mistral" || has("[INST]")) {
    if (has("[SYSTEM_PROMPT]")) {
      // Departure from llama.cpp, which calls both "mistral-v7": the "v7-tekken" templates
      // (Mistral-Small-3.x, Devstral, Ministral-3) write "[INST]" without the space and a long
      // default system prompt with the date; ork renders only the spaced one (Mistral-Large-2411),
      // so the other is named, and refused, rather than rendered wrongly.
      return has("'[INST] '") || has("\"[INST] \"") ? "mistral-v7" : "mistral-v7-tekken";
    }
    if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]")) {
      if (has(" [INST]")) return "mistral-v1";
      if (has("\"[INST]\"")) return "mistral-v3-tekken";
      return "mistral-v3";
    }
    if (has("content.strip()")) return "llama2-sys-strip";
    if (has("bos_token + '[INST]")) return "llama2-sys-bos";
    if (has("<<SYS>>")) return "llama2-sys";
    return "llama2";
  }
  if (has("<|assistant|>") && has("<|end|>")) return "phi3";
  if (has("[gMASK]<sop>")) return "chatglm4";
  if (has("<|assistant|>") && has("<|user|>")) {
    if (has("<|tool_declare|>")) return "exaone-moe";
    return has("</s>") ? "falcon3" : "glmedge";
  }
  if (has("<|{{ item['role'] }}|>") && has("<|begin_of_image|>")) return "glmedge";
  if (has("<|user|>") && has("<|endoftext|>")) return "zephyr";
  if (has("bos_token + message['role']")) return "monarch";
  if (has("<start_of_turn>")) return "gemma";
  if (has("'\\n\\nAssistant: ' + eos_token")) return "orion";
  if (has("GPT4 Correct ")) return "openchat";
  if (has("USER: ") && has("ASSISTANT: ")) return has("SYSTEM: ") ? "vicuna-orca" : "vicuna";
  if (has("### Instruction:") && has("<|EOT|>")) return "deepseek";
  if (has("<|START_OF_TURN_TOKEN|>") && has("<|USER_TOKEN|>")) return "command-r";
  if (has("<|start_header_id|>") && has("<|end_header_id|>")) return "llama3";
  if (has("[gMASK]sop")) return "chatglm3";
  if (has("<用户>")) return "minicpm";
  if (has("'Assistant: ' + message['content'] + eos_token")) return "deepseek2";
  if (has("<｜Assistant｜>") && has("<｜User｜>") && has("<｜end▁of▁sentence｜>")) return "deepseek3";
  return "";
}

// The value of the Jinja string literal that starts at s[0] (a quote): \n, \t, \\, \' and \" are
// unescaped. Returns false when the literal does not close.
bool jinja_literal(std::string_view s, std::string& out) {
  out.clear();
  const char q = s[0];
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == q) return true;
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char c = s[++i];
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
    } else {
      out += s[i];
    }
  }
  return false;
}

// ChatML templates that insert a system prompt when the conversation has none (Qwen2.5) write it as
// one literal '<|im_start|>system\n…<|im_end|>\n' with no expression inside; returns its text.
std::string chatml_default_system(std::string_view t) {
  const std::string_view open = "<|im_start|>system\\n";
  for (size_t at = t.find(open); at != std::string_view::npos; at = t.find(open, at + 1)) {
    if (at == 0 || (t[at - 1] != '\'' && t[at - 1] != '"')) continue;
    std::string lit;
    if (!jinja_literal(t.substr(at - 1), lit)) continue;
    const std::string head = "<|im_start|>system\n", tail = "<|im_end|>\n";
    if (lit.size() > head.size() + tail.size() && lit.compare(lit.size() - tail.size(), tail.size(), tail) == 0) {
      return lit.substr(head.size(), lit.size() - head.size() - tail.size());
    }
  }
  return "";
}

// Llama 3.1 templates open with a system header holding the knowledge cut-off and a date
// (`set date_string = "26 Jul 2024"` when the caller gives none); returns "" for other Llama 3s.
std::string llama31_date_header(std::string_view t) {
  if (!contains(t, "Cutting Knowledge Date: December 2023")) return "";
  std::string date = "26 Jul 2024";
  const std::string_view key = "set date_string = ";
  const size_t at = t.find(key);
  if (at != std::string_view::npos && at + key.size() < t.size()) {
    std::string lit;
    if (jinja_literal(t.substr(at + key.size()), lit)) date = lit;
  }
  return "Cutting Knowledge Date: December 2023\nToday Date: " + date + "\n\n";
}

// The literal `key` is set to in the template, e.g. key "set system_message = " in
// "{% set system_message = 'You are …' %}" (the first such assignment of a string literal); "".
std::string literal_after(std::string_view t, std::string_view key) {
  for (size_t at = t.find(key); at != std::string_view::npos; at = t.find(key, at + 1)) {
    const size_t q = at + key.size();
    if (q >= t.size() || (t[q] != '\'' && t[q] != '"')) continue;
    std::string lit;
    if (jinja_literal(t.substr(q), lit)) return lit;
  }
  return "";
}

// deepseek-coder's default system prompt: the literal the template writes when no message is a
// system one ("{%- if not ns.found -%}\n{{'You are an AI programming assistant, …\n'}}").
std::string deepseek_default_system(std::string_view t) {
  const size_t at = t.find("if not ns.found");
  if (at == std::string_view::npos) return "";
  return literal_after(t.substr(at), "{{");
}

const std::vector<std::string>& rendered_names() {
  static const std::vector<std::string> k = {
      "chatml", "llama3", "llama2", "llama2-sys-bos", "llama2-sys-strip", "mistral-v1", "mistral-v3",
      "mistral-v3-tekken", "mistral-v7", "gemma", "phi3", "deepseek", "deepseek2", "deepseek3", "ork-fortunes"};
  return k;
}

// Throws unless m[first..] alternate user/assistant starting with a user (`family` names the
// template in the error).
void check_alternating(const std::vector<ChatMessage>& m, size_t first, const std::string& family) {
  for (size_t i = first; i < m.size(); ++i) {
    const char* want = (i - first) % 2 == 0 ? "user" : "assistant";
    ORK_CHECK(m[i].role == want, "chat template ", family, ": message ", i, " has role '", m[i].role,
              "' where '", want, "' is expected (turns alternate user/assistant)");
  }
}

// Without a system role: the leading system message goes into the first user message; turns must
// alternate user/assistant from a user. `family` names the template in errors.
std::vector<ChatMessage> merge_system(const std::vector<ChatMessage>& in, const std::string& family) {
  std::vector<ChatMessage> out = in;
  if (!out.empty() && out[0].role == "system") {
    ORK_CHECK(out.size() >= 2 && out[1].role == "user", "chat template ", family,
              ": a system message must be followed by a user message");
    out[1].content = out[0].content + "\n\n" + out[1].content;
    out.erase(out.begin());
  }
  check_alternating(out, 0, family);
  return out;
}

}  // namespace

ChatTemplate::ChatTemplate(Family f, std::string name, std::string bos, std::string eos)
    : family_(f), name_(std::move(name)), bos_(std::move(bos)), eos_(std::move(eos)) {
  switch (f) {
    case Family::kChatml: stops_ = {"<|im_end|>"}; break;
    case Family::kLlama3: stops_ = {"<|eot_id|>", "<|eom_id|>"}; break;
    case Family::kGemma: stops_ = {"<end_of_turn>"}; break;
    case Family::kPhi3: stops_ = {"<|end|>"}; break;
    case Family::kDeepseek3: stops_ = {"<｜end▁of▁sentence｜>"}; break;
    case Family::kDeepseek2: stops_ = {"<｜end▁of▁sentence｜>"}; break;
    default: break;  // the others end a turn with EOS only
  }
  if (!eos_.empty()) stops_.push_back(eos_);
}

std::vector<std::string> ChatTemplate::names() { return rendered_names(); }

ChatTemplate ChatTemplate::named(std::string_view name, std::string bos, std::string eos) {
  static const std::pair<const char*, Family> kFamilies[] = {
      {"chatml", Family::kChatml},
      {"llama3", Family::kLlama3},
      {"llama2", Family::kLlama2},
      {"llama2-sys-bos", Family::kLlama2SysBos},
      {"llama2-sys-strip", Family::kLlama2SysStrip},
      {"mistral-v1", Family::kMistralV1},
      {"mistral-v3", Family::kMistralV3},
      {"mistral-v3-tekken", Family::kMistralV3Tekken},
      {"mistral-v7", Family::kMistralV7},
      {"gemma", Family::kGemma},
      {"phi3", Family::kPhi3},
      {"deepseek", Family::kDeepseek},
      {"deepseek2", Family::kDeepseek2},
      {"deepseek3", Family::kDeepseek3},
      {"ork-fortunes", Family::kFortunes}};
  for (const auto& [n, f] : kFamilies) {
    if (name == n) {
      ChatTemplate t(f, n, std::move(bos), std::move(eos));
      t.eos_without_prompt_ = f == Family::kPhi3;
      return t;
    }
  }
  std::string known;
  for (const std::string& n : rendered_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown chat template '" + std::string(name) + "' (known: " + known + ")");
}

ChatTemplate ChatTemplate::detect(std::string_view jinja, std::string bos, std::string eos) {
  const std::string name = detect_name(jinja);
  ORK_CHECK(!name.empty(),
            "tokenizer.chat_template matches no chat template family ork knows; give one with "
            "--chat-template NAME");
  bool known = false;
  for (const std::string& n : rendered_names()) known = known || n == name;
  ORK_CHECK(known, "tokenizer.chat_template is of the '", name,
            "' family (as llama.cpp detects it), which ork does not render; give one with "
            "--chat-template NAME");
  ChatTemplate t = named(name, std::move(bos), std::move(eos));
  t.eos_without_prompt_ = t.family_ == Family::kPhi3 && contains(jinja, "eos_token");
  if (t.family_ == Family::kChatml) t.default_system_ = chatml_default_system(jinja);
  if (t.family_ == Family::kLlama3) t.date_header_ = llama31_date_header(jinja);
  if (t.family_ == Family::kLlama2SysStrip) t.default_system_ = literal_after(jinja, "set system_message = ");
  if (t.family_ == Family::kDeepseek) t.default_system_ = deepseek_default_system(jinja);
  if (t.family_ == Family::kDeepseek3) {
    t.think_prompt_ = contains(jinja, "'<｜Assistant｜><think>\\n'");
    t.think_closed_ = t.think_prompt_ && contains(jinja, "if not enable_thinking");
  }
  return t;
}

bool ChatTemplate::renders_bos() const {
  if (bos_.empty()) return false;
  // llama2-sys-bos writes BOS only before later turns; chatml and phi3 not at all.
  return family_ != Family::kChatml && family_ != Family::kPhi3 && family_ != Family::kLlama2SysBos;
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages, bool gen) const {
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& r = messages[i].role;
    ORK_CHECK(r == "system" || r == "user" || r == "assistant", "chat message ", i, " has role '",
              r, "' (known: system, user, assistant)");
  }
  std::string s;
  switch (family_) {
    case Family::kChatml: {
      // Qwen2.5: its default system prompt when the first message is not a system one.
      if (!default_system_.empty() && (messages.empty() || messages[0].role != "system")) {
        s += "<|im_start|>system\n" + default_system_ + "<|im_end|>\n";
      }
      for (const ChatMessage& m : messages) s += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      if (gen) s += "<|im_start|>assistant\n";
      break;
    }
    case Family::kLlama3: {
      s += bos_;
      size_t first = 0;
      if (!date_header_.empty()) {  // Llama 3.1: a system header always, holding the dates
        std::string system;
        if (!messages.empty() && messages[0].role == "system") system = trim(messages[first++].content);
        s += "<|start_header_id|>system<|end_header_id|>\n\n" + date_header_ + system + "<|eot_id|>";
      }
      for (size_t i = first; i < messages.size(); ++i) {
        s += "<|start_header_id|>" + messages[i].role + "<|end_header_id|>\n\n" +
             trim(messages[i].content) + "<|eot_id|>";
      }
      if (gen) s += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      break;
    }
    case Family::kLlama2: {  // Mistral-7B-Instruct-v0.2 (llama.cpp's "llama2")
      s += bos_;
      for (const ChatMessage& m : merge_system(messages, name_)) {
        s += m.role == "user" ? "[INST] " + m.content + " [/INST]" : m.content + eos_;
      }
      break;  // the template has no generation prompt: "[/INST]" already opens the reply
    }
    case Family::kGemma: {
      s += bos_;
      for (const ChatMessage& m : merge_system(messages, name_)) {
        s += "<start_of_turn>" + std::string(m.role == "assistant" ? "model" : "user") + "\n" +
             trim(m.content) + "<end_of_turn>\n";
      }
      if (gen) s += "<start_of_turn>model\n";
      break;
    }
    case Family::kPhi3: {  // Phi-3.5-mini: empty system messages are left out
      for (const ChatMessage& m : messages) {
        if (m.role == "system" && m.content.empty()) continue;
        s += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
      }
      if (gen) {
        s += "<|assistant|>\n";
      } else if (eos_without_prompt_) {
        s += eos_;
      }
      break;
    }
    case Family::kDeepseek3: {  // DeepSeek-V3 / R1: the last system message first, then the turns
      std::string system;
      for (const ChatMessage& m : messages) {
        if (m.role == "system") system = m.content;
      }
      s += bos_ + system;
      for (const ChatMessage& m : messages) {
        if (m.role == "user") {
          s += "<｜User｜>" + m.content;
        } else if (m.role == "assistant") {
          std::string content = m.content;
          const size_t think = content.rfind("</think>");  // R1 drops past reasoning
          if (think_prompt_ && think != std::string::npos) content = content.substr(think + 8);
          s += "<｜Assistant｜>" + content + "<｜end▁of▁sentence｜>";
        }
      }
      if (gen) s += think_prompt_ ? (think_closed_ ? "<｜Assistant｜><think>\n</think>" : "<｜Assistant｜><think>\n")
                                  : "<｜Assistant｜>";
      break;
    }
    case Family::kLlama2SysBos:
    case Family::kLlama2SysStrip:
    case Family::kMistralV1:
    case Family::kMistralV3:
    case Family::kMistralV3Tekken:
    case Family::kMistralV7:
    case Family::kDeepseek:
    case Family::kDeepseek2: return render_more(messages, gen);
    case Family::kFortunes: {
      for (const ChatMessage& m : messages) {
        if (m.role == "system") s += bos_ + m.content + eos_;
        if (m.role == "user") s += bos_ + m.content + "\n";
        if (m.role == "assistant") s += m.content + eos_;
      }
      break;  // the reply continues straight after the user's line
    }
  }
  return s;
}

}  // namespace ork::model
