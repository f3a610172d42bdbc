// ork serve over real HTTP on loopback (httplib client against the real `ork serve` process on the
// default model): the OpenAI and Ollama routes, streamed == not streamed, seeds, stop strings,
// finish reasons, the prompt cache, API keys, and a 4xx JSON error naming the field for bad input.
#include <httplib.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "build_dirs.h"
#include "serve/serve_process.h"

namespace ork {
namespace {

using json = nlohmann::json;

class Serve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new testing::ServeProcess({"--parallel", "2", "--ctx", "256"}); }
  static void TearDownTestSuite() {
    EXPECT_EQ(server_->stop(), 0);
    delete server_;
  }
  httplib::Client client() {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(120, 0);
    return c;
  }
  json post(const std::string& path, const json& body, int want_status = 200) {
    auto r = client().Post(path, body.dump(), "application/json");
    EXPECT_TRUE(r) << path;
    if (!r) return json();
    EXPECT_EQ(r->status, want_status) << path << " " << r->body;
    return json::parse(r->body);
  }
  // The concatenated content of an SSE stream, checking its framing; `last` gets the final chunk
  // with a finish_reason, `usage` the usage chunk if any.
  std::string sse_text(const std::string& path, json body, json* last = nullptr, json* usage = nullptr) {
    body["stream"] = true;
    auto r = client().Post(path, body.dump(), "application/json");
    EXPECT_TRUE(r);
    if (!r) return "";
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
    std::string text;
    size_t at = 0;
    bool done = false;
    while (at < r->body.size()) {
      const size_t end = r->body.find("\n\n", at);
      EXPECT_NE(end, std::string::npos) << "an event without its blank line";
      if (end == std::string::npos) break;
      const std::string ev = r->body.substr(at, end - at);
      at = end + 2;
      EXPECT_EQ(ev.rfind("data: ", 0), 0u) << ev;
      const std::string data = ev.substr(6);
      if (data == "[DONE]") {
        done = true;
        EXPECT_EQ(at, r->body.size()) << "bytes after [DONE]";
        break;
      }
      const json j = json::parse(data);
      if (j.contains("usage") && usage != nullptr) *usage = j;
      if (j["choices"].empty()) continue;
      const json& c = j["choices"][0];
      if (c.contains("delta") && c["delta"].contains("content")) text += c["delta"]["content"].get<std::string>();
      if (c.contains("text")) text += c["text"].get<std::string>();
      if (!c["finish_reason"].is_null() && last != nullptr) *last = j;
    }
    EXPECT_TRUE(done) << "no data: [DONE]";
    return text;
  }
  static testing::ServeProcess* server_;
};

testing::ServeProcess* Serve::server_ = nullptr;

const json kChat = {{"messages", {{{"role", "user"}, {"content", "The best thing about a computer is"}}}},
                    {"max_tokens", 24}, {"temperature", 0.9}, {"seed", 7}};

TEST_F(Serve, ListsTheModelOnBothApis) {
  ASSERT_GT(server_->port(), 0);
  auto r = client().Get("/v1/models");
  ASSERT_TRUE(r);
  const json m = json::parse(r->body);
  EXPECT_EQ(m["object"], "list");
  EXPECT_EQ(m["data"][0]["id"], "default");
  r = client().Get("/api/tags");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)["models"][0]["name"], "default");
  r = client().Get("/api/version");
  ASSERT_TRUE(r);
  EXPECT_TRUE(json::parse(r->body)["version"].is_string());
  r = client().Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)["status"], "ok");
}

TEST_F(Serve, ChatStreamedOrNotGivesTheSameTextForASeed) {
  const json a = post("/v1/chat/completions", kChat);
  const json b = post("/v1/chat/completions", kChat);
  ASSERT_EQ(a["object"], "chat.completion");
  const std::string text = a["choices"][0]["message"]["content"];
  EXPECT_EQ(b["choices"][0]["message"]["content"], text);
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(a["choices"][0]["message"]["role"], "assistant");
  json last, usage;
  json s = kChat;
  s["stream_options"] = {{"include_usage", true}};
  EXPECT_EQ(sse_text("/v1/chat/completions", s, &last, &usage), text);
  EXPECT_EQ(last["choices"][0]["finish_reason"], a["choices"][0]["finish_reason"]);
  EXPECT_EQ(usage["usage"]["completion_tokens"], a["usage"]["completion_tokens"]);
  EXPECT_EQ(usage["usage"]["prompt_tokens"], a["usage"]["prompt_tokens"]);
  // Ollama, same seed and sampling: same text, streamed (NDJSON, the default) or not.
  json o = {{"model", "default"}, {"messages", kChat["messages"]}, {"stream", false},
            {"options", {{"num_predict", 24}, {"temperature", 0.9}, {"seed", 7}}}};
  const json on = post("/api/chat", o);
  EXPECT_EQ(on["message"]["content"], text);
  EXPECT_EQ(on["done"], true);
  o.erase("stream");
  auto r = client().Post("/api/chat", o.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/x-ndjson");
  std::string streamed;
  size_t at = 0, lines = 0;
  json final_line;
  while (at < r->body.size()) {
    const size_t nl = r->body.find('\n', at);
    ASSERT_NE(nl, std::string::npos);
    final_line = json::parse(r->body.substr(at, nl - at));
    streamed += final_line["message"]["content"].get<std::string>();
    at = nl + 1;
    ++lines;
  }
  EXPECT_EQ(streamed, text);
  EXPECT_GT(lines, 1u);
  EXPECT_EQ(final_line["done"], true);
  EXPECT_EQ(final_line["eval_count"], a["usage"]["completion_tokens"]);
}

TEST_F(Serve, MaxTokensGivesLengthAndUsageCounts) {
  json c = kChat;
  c["max_tokens"] = 3;
  c["temperature"] = 0;
  const json a = post("/v1/chat/completions", c);
  EXPECT_EQ(a["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(a["usage"]["completion_tokens"], 3);
  EXPECT_EQ(a["usage"]["total_tokens"], a["usage"]["prompt_tokens"].get<int>() + 3);
  const json g = post("/api/generate", {{"prompt", "Love is"}, {"stream", false}, {"options", {{"num_predict", 3}}}});
  EXPECT_EQ(g["done_reason"], "length");
  EXPECT_EQ(g["eval_count"], 3);
  EXPECT_TRUE(g["response"].is_string());
}

TEST_F(Serve, StopStringsCutTheTextTheSameWayStreamedOrNot) {
  json c = kChat;
  c["temperature"] = 0;
  c["max_tokens"] = 40;
  const std::string full = post("/v1/chat/completions", c)["choices"][0]["message"]["content"];
  ASSERT_GE(full.size(), 6u);
  const std::string stop = full.substr(3, 2);  // a string the reply contains
  c["stop"] = json::array({"never-in-the-text", stop});
  const json a = post("/v1/chat/completions", c);
  const std::string cut = a["choices"][0]["message"]["content"];
  EXPECT_EQ(cut, full.substr(0, full.find(stop)));
  EXPECT_EQ(a["choices"][0]["finish_reason"], "stop");
  json last;
  EXPECT_EQ(sse_text("/v1/chat/completions", c, &last), cut);
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  c["stop"] = stop;  // a single string
  EXPECT_EQ(post("/v1/chat/completions", c)["choices"][0]["message"]["content"], cut);
}

TEST_F(Serve, CompletionsStreamedOrNot) {
  const json c = {{"prompt", "A penny saved"}, {"max_tokens", 12}, {"temperature", 0}};
  const json a = post("/v1/completions", c);
  EXPECT_EQ(a["object"], "text_completion");
  const std::string text = a["choices"][0]["text"];
  EXPECT_EQ(sse_text("/v1/completions", c), text);
}

TEST_F(Serve, AConversationThatGoesOnReusesTheSlotsCache) {
  json c = {{"messages", {{{"role", "user"}, {"content", "Time flies like"}}}}, {"max_tokens", 10}, {"temperature", 0}};
  const json a = post("/v1/chat/completions", c);
  c["messages"].push_back({{"role", "assistant"}, {"content", a["choices"][0]["message"]["content"]}});
  c["messages"].push_back({{"role", "user"}, {"content", "and fruit flies like"}});
  const json b = post("/v1/chat/completions", c);
  EXPECT_GE(b["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), a["usage"]["prompt_tokens"].get<int>());
}

struct Bad {
  std::string path, body;
  int status;
  std::string field;  // expected "param" (OpenAI) / in the message (Ollama)
};

TEST_F(Serve, BadRequestsGetA4xxJsonErrorNamingTheField) {
  std::string long_text;
  for (int i = 0; i < 300; ++i) long_text += "word ";
  const std::vector<Bad> cases = {
      {"/v1/chat/completions", "{not json", 400, ""},
      {"/v1/chat/completions", "[1,2]", 400, ""},
      {"/v1/chat/completions", "{}", 400, "messages"},
      {"/v1/chat/completions", R"({"messages":[]})", 400, "messages"},
      {"/v1/chat/completions", R"({"messages":"hi"})", 400, "messages"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user"}]})", 400, "messages[0].content"},
      {"/v1/chat/completions", R"({"messages":[{"role":"robot","content":"x"}]})", 400, "messages[0].role"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":5}]})", 400, "messages[0].content"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"temperature":-1})", 400, "temperature"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"temperature":"hot"})", 400, "temperature"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"top_p":0})", 400, "top_p"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"max_tokens":0})", 400, "max_tokens"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"max_tokens":1.5})", 400, "max_tokens"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"seed":-3})", 400, "seed"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"stop":[1]})", 400, "stop[0]"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"stream":"yes"})", 400, "stream"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"model":"gpt-4"})", 404, "model"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":")" + long_text + R"("}]})", 400, "messages"},
      {"/v1/completions", R"({"max_tokens":3})", 400, "prompt"},
      {"/v1/completions", R"({"prompt":""})", 400, "prompt"},
      {"/v1/completions", R"({"prompt":")" + long_text + R"("})", 400, "prompt"},
      {"/api/chat", R"({"model":"llama3","messages":[{"role":"user","content":"x"}]})", 404, "model"},
      {"/api/chat", R"({"messages":[{"role":"user","content":"x"}],"options":{"temperature":"x"}})", 400, "options.temperature"},
      {"/api/generate", R"({"prompt":5})", 400, "prompt"},
  };
  for (const Bad& b : cases) {
    auto r = client().Post(b.path, b.body, "application/json");
    ASSERT_TRUE(r) << b.body;
    EXPECT_EQ(r->status, b.status) << b.path << " " << b.body << " → " << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    const json j = json::parse(r->body, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r->body;
    if (b.path.rfind("/api/", 0) == 0) {
      ASSERT_TRUE(j["error"].is_string()) << r->body;
      EXPECT_NE(j["error"].get<std::string>().find("'" + b.field + "'"), std::string::npos) << r->body;
    } else {
      ASSERT_TRUE(j["error"]["message"].is_string()) << r->body;
      EXPECT_EQ(j["error"]["param"], b.field.empty() ? json(nullptr) : json(b.field)) << r->body;
    }
  }
  // The server is still serving.
  EXPECT_EQ(post("/v1/completions", {{"prompt", "ok"}, {"max_tokens", 2}})["choices"][0]["finish_reason"], "length");
}

TEST(ServeKey, AnApiKeyIsRequiredWhenSet) {
  testing::ServeProcess s({"--api-key", "sekret"});
  ASSERT_GT(s.port(), 0);
  httplib::Client c("127.0.0.1", s.port());
  const std::string body = R"({"prompt":"hi","max_tokens":2})";
  auto r = c.Post("/v1/completions", body, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_TRUE(c.Get("/health"));
  EXPECT_EQ(c.Get("/health")->status, 200);
  r = c.Post("/v1/completions", httplib::Headers{{"Authorization", "Bearer wrong"}}, body, "application/json");
  EXPECT_EQ(r->status, 401);
  r = c.Post("/v1/completions", httplib::Headers{{"Authorization", "Bearer sekret"}}, body, "application/json");
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(s.stop(), 0);
}

TEST(ServeStart, ABusyPortOrBadFlagIsOneErrorLine) {
  testing::ServeProcess a({});
  ASSERT_GT(a.port(), 0);
  const std::string cmd = ork::testing::binary_dir() + "/ork serve --port " + std::to_string(a.port()) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[512];
  std::string out;
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int st = pclose(p);
  EXPECT_EQ(WEXITSTATUS(st), 1);
  EXPECT_NE(out.find("ork: error: cannot listen on 127.0.0.1:" + std::to_string(a.port())), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

}  // namespace
}  // namespace ork
