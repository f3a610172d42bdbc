// ChatTemplate against the real templates' own Jinja output: tests/fixtures/chat_templates holds the
// templates (from llama.cpp's models/templates and tests/test-chat-template.cpp) and expected.txt,
// rendered by python3-jinja2 (render_expected.py there says how).
#include "model/chat_template.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "build_dirs.h"
#include "core/error.h"

namespace ork::model {
namespace {

const std::string kDir = ork::testing::source_dir() + "/tests/fixtures/chat_templates/";

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Case {
  std::string id, tmpl, bos, eos, expected;
  bool gen = false;
  std::vector<ChatMessage> messages;
};

// expected.txt: records "KEY LEN\nBYTES\n".
std::vector<Case> load_cases() {
  const std::string d = read_file(kDir + "expected.txt");
  std::vector<Case> cases;
  size_t i = 0;
  while (i < d.size()) {
    const size_t nl = d.find('\n', i);
    const size_t sp = d.find(' ', i);
    if (nl == std::string::npos || sp == std::string::npos || sp > nl) throw Error("bad record");
    const std::string key = d.substr(i, sp - i);
    const size_t len = std::stoul(d.substr(sp + 1, nl - sp - 1));
    const std::string v = d.substr(nl + 1, len);
    i = nl + 1 + len + 1;
    if (key == "case") {
      cases.push_back({});
      cases.back().id = v;
    }
    if (cases.empty()) throw Error("record before the first case");
    Case& c = cases.back();
    if (key == "template") c.tmpl = v;
    if (key == "bos") c.bos = v;
    if (key == "eos") c.eos = v;
    if (key == "gen") c.gen = v == "1";
    if (key == "role") c.messages.push_back({v, ""});
    if (key == "content") c.messages.back().content = v;
    if (key == "expected") c.expected = v;
  }
  return cases;
}

TEST(ChatTemplate, RendersAsTheRealTemplatesJinja) {
  const std::vector<Case> cases = load_cases();
  ASSERT_EQ(cases.size(), 192u);
  std::map<std::string, int> per_template;
  for (const Case& c : cases) {
    const ChatTemplate t = ChatTemplate::detect(read_file(kDir + c.tmpl), c.bos, c.eos);
    EXPECT_EQ(t.render(c.messages, c.gen), c.expected) << "case " << c.id << " " << c.tmpl;
    ++per_template[c.tmpl];
  }
  EXPECT_EQ(per_template.size(), 16u);
}

TEST(ChatTemplate, DetectsTheFamilies) {
  const std::map<std::string, std::string> want = {
      {"Qwen-Qwen2.5-7B-Instruct.jinja", "chatml"},
      {"teknium-OpenHermes-2.5-Mistral-7B.jinja", "chatml"},
      {"meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3"},
      {"mistralai-Mistral-7B-Instruct-v0.2.jinja", "llama2"},
      {"google-gemma-2-2b-it.jinja", "gemma"},
      {"microsoft-Phi-3.5-mini-instruct.jinja", "phi3"},
      {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek3"},
      {"ork-fortunes.jinja", "ork-fortunes"},
      {"mistralai-Mistral-7B-Instruct-v0.2-v1.jinja", "mistral-v1"},
      {"mistralai-Mistral-Large-Instruct-2407.jinja", "mistral-v3"},
      {"mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral-v3-tekken"},
      {"mistralai-Mistral-Large-Instruct-2411.jinja", "mistral-v7"},
      {"TheBloke-FusionNet_34Bx2_MoE-AWQ.jinja", "llama2-sys-bos"},
      {"bofenghuang-vigogne-2-70b-chat.jinja", "llama2-sys-strip"},
      {"deepseek-ai-deepseek-coder-33b-instruct.jinja", "deepseek"},
      {"deepseek-ai-DeepSeek-V2.jinja", "deepseek2"},
  };
  for (const auto& [file, name] : want) {
    EXPECT_EQ(ChatTemplate::detect(read_file(kDir + file), "<s>", "</s>").name(), name) << file;
  }
}

TEST(ChatTemplate, UnknownTemplateIsAnErrorNamingIt) {
  try {
    (void)ChatTemplate::detect("{{ messages[0].content }}", "", "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("matches no chat template family"), std::string::npos);
  }
  try {  // a family llama.cpp knows and ork does not render: named
    (void)ChatTemplate::detect("{{'<|START_OF_TURN_TOKEN|><|USER_TOKEN|>'}}", "", "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'command-r'"), std::string::npos) << e.what();
  }
  try {  // Mistral's v7-tekken (llama.cpp: "mistral-v7" too) is not rendered as the spaced v7
    (void)ChatTemplate::detect(read_file(kDir + "mistralai-Mistral-Small-3.2-24B-Instruct-2506.jinja"), "<s>", "</s>");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'mistral-v7-tekken'"), std::string::npos) << e.what();
  }
  try {
    (void)ChatTemplate::named("vicuna", "", "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown chat template 'vicuna'"), std::string::npos);
  }
}

TEST(ChatTemplate, NamedOverridesRenderThePlainFamily) {
  for (const std::string& n : ChatTemplate::names()) {
    EXPECT_EQ(ChatTemplate::named(n, "<s>", "</s>").name(), n);
  }
  const ChatTemplate t = ChatTemplate::named("chatml", "", "");
  EXPECT_EQ(t.render({{"user", "hi"}}, true), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(t.stop_strings(), std::vector<std::string>{"<|im_end|>"});
}

// The Mistral and Llama 2 families whose templates raise_exception on turns that do not alternate
// refuse them too, naming the template.
TEST(ChatTemplate, MistralAndLlama2TurnOrderIsChecked) {
  for (const char* n : {"mistral-v1", "mistral-v3", "mistral-v3-tekken", "llama2-sys-strip"}) {
    const ChatTemplate t = ChatTemplate::named(n, "<s>", "</s>");
    try {
      (void)t.render({{"system", "s"}, {"user", "a"}, {"user", "b"}}, true);
      ADD_FAILURE() << n << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  }
}

TEST(ChatTemplate, BadRolesAndTurnOrderAreErrors) {
  const ChatTemplate chatml = ChatTemplate::named("chatml", "", "");
  EXPECT_THROW((void)chatml.render({{"tool", "x"}}, true), Error);
  const ChatTemplate gemma = ChatTemplate::named("gemma", "<bos>", "<eos>");
  EXPECT_THROW((void)gemma.render({{"user", "a"}, {"user", "b"}}, true), Error);
  EXPECT_THROW((void)gemma.render({{"assistant", "a"}}, true), Error);
  EXPECT_THROW((void)gemma.render({{"system", "a"}}, true), Error);
}

// A conversation extended by the reply and a new user message renders to a text that starts with
// the previous prompt plus the reply: what lets ork chat and serve keep the KV cache between turns.
// (Not so for the Mistral, Llama 2 <<SYS>> and DeepSeek-V2 templates, which put a space or the system
// text before the reply or the last turn: there the cache keeps the prefix up to that point.)
TEST(ChatTemplate, NextTurnExtendsThePreviousPrompt) {
  for (const char* file : {"Qwen-Qwen2.5-7B-Instruct.jinja", "meta-llama-Llama-3.1-8B-Instruct.jinja",
                                  "google-gemma-2-2b-it.jinja", "microsoft-Phi-3.5-mini-instruct.jinja",
                                  "ork-fortunes.jinja", "deepseek-ai-deepseek-coder-33b-instruct.jinja"}) {
    const ChatTemplate t = ChatTemplate::detect(read_file(kDir + file), "<s>", "</s>");
    std::vector<ChatMessage> conv = {{"system", "S"}, {"user", "U1"}};
    const std::string p1 = t.render(conv, true);
    conv.push_back({"assistant", "A1"});
    conv.push_back({"user", "U2"});
    const std::string p2 = t.render(conv, true);
    EXPECT_EQ(p2.substr(0, p1.size() + 2), p1 + "A1") << file;
  }
}

}  // namespace
}  // namespace ork::model
