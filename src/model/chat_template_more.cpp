// ChatTemplate::render for the Mistral ([INST] v1/v3/v3-tekken/v7), Llama 2 <<SYS>> and DeepSeek
// (coder, V2) families: each as its real template renders it (tests/fixtures/chat_templates, checked
// against python3-jinja2 by tests/model/chat_template_test.cpp); docs/chat.md has the rules.
#include "core/error.h"
#include "model/chat_template.h"

namespace ork::model {
namespace {

// Python's str.strip() / Jinja's trim on ASCII whitespace.
std::string strip(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// Throws unless m[first..] alternate user/assistant starting with a user.
void alternating(const std::vector<ChatMessage>& m, size_t first, const std::string& family) {
  for (size_t i = first; i < m.size(); ++i) {
    const char* want = (i - first) % 2 == 0 ? "user" : "assistant";
    ORK_CHECK(m[i].role == want, "chat template ", family, ": message ", i, " has role '", m[i].role,
              "' where '", want, "' is expected (after an optional system message, turns alternate user/assistant)");
  }
}

}  // namespace

std::string ChatTemplate::render_more(const std::vector<ChatMessage>& m, bool gen) const {
  std::string s;
  const bool has_system = !m.empty() && m[0].role == "system";
  const size_t first = has_system ? 1 : 0;
  switch (family_) {
    case Family::kMistralV1: {  // Mistral-7B-Instruct v0.1/v0.2 "v1": the system text opens the first turn
      alternating(m, first, name_);
      s += bos_;
      for (size_t i = first; i < m.size(); ++i) {
        if (m[i].role == "user") {
          s += " [INST] " + (has_system && i == first ? m[0].content + "\n\n" : "") + m[i].content + " [/INST]";
        } else {
          s += " " + m[i].content + eos_;
        }
      }
      break;
    }
    case Family::kMistralV3:          // Mistral-Large-2407: the system text opens the last user turn
    case Family::kMistralV3Tekken: {  // Mistral-Nemo-2407: the same without the spaces
      const bool tekken = family_ == Family::kMistralV3Tekken;
      alternating(m, first, name_);
      s += bos_;
      for (size_t i = first; i < m.size(); ++i) {
        if (m[i].role == "user") {
          const bool sys_here = has_system && i + 1 == m.size();
          s += std::string(tekken ? "[INST]" : "[INST] ") + (sys_here ? m[0].content + "\n\n" : "") +
               m[i].content + "[/INST]";
        } else {
          s += (tekken ? m[i].content : " " + strip(m[i].content)) + eos_;
        }
      }
      break;
    }
    case Family::kMistralV7: {  // Mistral-Large-2411: system turns in place
      s += bos_;
      for (const ChatMessage& x : m) {
        if (x.role == "user") s += "[INST] " + x.content + "[/INST]";
        if (x.role == "system") s += "[SYSTEM_PROMPT] " + x.content + "[/SYSTEM_PROMPT]";
        if (x.role == "assistant") s += " " + x.content + eos_;
      }
      break;
    }
    case Family::kLlama2SysBos: {  // FusionNet: no [INST] before the first user turn unless a system one
      for (size_t i = 0; i < m.size(); ++i) {
        if (m[i].role == "user") {
          s += i > 1 ? bos_ + "[INST] " + m[i].content + " [/INST]" : m[i].content + " [/INST]";
        } else if (m[i].role == "system") {
          s += "[INST] <<SYS>>\n" + m[i].content + "\n<</SYS>>\n\n";
        } else {
          s += " " + m[i].content + " " + eos_;
        }
      }
      break;
    }
    case Family::kLlama2SysStrip: {  // Llama-2-chat style (vigogne-2): <<SYS>> inside the first turn
      std::string system;
      bool with_system = has_system;
      if (has_system) {
        system = m[0].content;
      } else if (!m.empty() && m[0].content.find("<<SYS>>") == std::string::npos && !default_system_.empty()) {
        system = default_system_;
        with_system = true;
      }
      alternating(m, first, name_);
      s += bos_;
      for (size_t i = first; i < m.size(); ++i) {
        const std::string content =
            with_system && i == first ? "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + m[i].content : m[i].content;
        s += m[i].role == "user" ? "[INST] " + strip(content) + " [/INST]" : " " + strip(content) + " " + eos_;
      }
      break;
    }
    case Family::kDeepseek: {  // deepseek-coder-instruct: its default system text unless one is given
      bool any_system = false;
      for (const ChatMessage& x : m) any_system = any_system || x.role == "system";
      s += bos_;
      if (!any_system) s += default_system_;
      for (const ChatMessage& x : m) {
        if (x.role == "system") s += x.content;
        if (x.role == "user") s += "### Instruction:\n" + x.content + "\n";
        if (x.role == "assistant") s += "### Response:\n" + x.content + "\n<|EOT|>\n";
      }
      if (gen) s += "### Response:\n";
      break;
    }
    case Family::kDeepseek2: {  // DeepSeek-V2
      s += bos_;
      for (const ChatMessage& x : m) {
        if (x.role == "user") s += "User: " + x.content + "\n\n";
        if (x.role == "assistant") s += "Assistant: " + x.content + eos_;
        if (x.role == "system") s += x.content + "\n\n";
      }
      if (gen) s += "Assistant:";
      break;
    }
    default: fail("chat template ", name_, ": not rendered here");
  }
  return s;
}

}  // namespace ork::model
