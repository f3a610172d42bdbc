// ChatSession on the default model (build/models/default.gguf, which the build gives the
// ork-fortunes chat template): KV reuse between turns gives the same reply as evaluating the whole
// conversation afresh, save/load round-trips and validates, interrupts and errors keep the session.
#include "runtime/chat_session.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "build_dirs.h"
#include "core/error.h"
#include "model/temp_dir.h"
#include "runtime/generator.h"

namespace ork::runtime {
namespace {

const std::string kModel = ork::testing::binary_dir() + "/models/default.gguf";

SamplerParams greedy() {
  SamplerParams p;
  p.temperature = 0;
  p.seed = 1;
  return p;
}

auto ignore = [](const std::string&) { return true; };

class ChatSessionTest : public ::testing::Test {
 protected:
  static EngineOptions options() {
    EngineOptions o;
    o.model_path = kModel;
    o.device = "cpu";
    o.threads = 2;
    return o;
  }
  Engine engine_{options()};
  testing::TempDir dir_;
};

TEST_F(ChatSessionTest, TheDefaultModelHasTheFortunesTemplate) {
  EXPECT_EQ(chat_template_for(engine_.model(), "").name(), "ork-fortunes");
  EXPECT_EQ(chat_template_for(engine_.model(), "chatml").name(), "chatml");
  EXPECT_THROW((void)chat_template_for(engine_.model(), "nope"), Error);
}

TEST_F(ChatSessionTest, SecondTurnReusesTheCacheAndMatchesAFreshEvaluation) {
  Context ctx(engine_, 256);
  ChatSession s(ctx, chat_template_for(engine_.model(), ""));
  s.clear("");
  Sampler sampler(greedy());
  const ChatReply r1 = s.reply("The best thing about a computer is", sampler, 12, ignore);
  EXPECT_EQ(r1.n_reused, 0);
  EXPECT_GT(r1.n_gen, 0);
  const std::vector<int32_t> cached_after_1 = s.cached_tokens();
  EXPECT_EQ(int64_t(cached_after_1.size()), ctx.n_past());

  const ChatReply r2 = s.reply("Love is", sampler, 12, ignore);
  // Everything the cache held after turn 1 that the new rendering repeats is reused: at least the
  // first prompt.
  EXPECT_GE(r2.n_reused, r1.n_prompt);
  EXPECT_LT(r2.n_prompt - r2.n_reused, r2.n_prompt);

  // The same conversation evaluated from an empty cache gives the same greedy reply.
  std::vector<model::ChatMessage> history(s.messages().begin(), s.messages().end() - 1);
  const model::ChatTemplate& t = s.chat_template();
  const model::Tokenizer& tok = engine_.model().tokenizer();
  const std::vector<int32_t> prompt = tok.encode(t.render(history, true), false, true);
  EXPECT_EQ(int64_t(prompt.size()), r2.n_prompt);
  Context fresh(engine_, 256);
  Sampler s2(greedy());
  std::string text;
  generate(fresh, s2, prompt, r2.n_gen, [&](int32_t id) {
    if (!tok.is_eog(id)) text += tok.decode_token(id);
    return true;
  });
  EXPECT_EQ(text, r2.text);
}

TEST_F(ChatSessionTest, SaveAndLoadRoundTrip) {
  Context ctx(engine_, 256);
  ChatSession a(ctx, chat_template_for(engine_.model(), ""));
  a.clear("Fortunes.");
  Sampler sa(greedy());
  (void)a.reply("A penny saved", sa, 10, ignore);
  const std::string path = dir_.file("s.orkchat");
  a.save(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  Context ctx2(engine_, 256);
  ChatSession b(ctx2, chat_template_for(engine_.model(), ""));
  b.load(path);
  EXPECT_EQ(b.messages().size(), a.messages().size());
  EXPECT_EQ(b.cached_tokens(), a.cached_tokens());
  EXPECT_EQ(ctx2.n_past(), ctx.n_past());

  Sampler sb(greedy());
  const ChatReply ra = a.reply("Time flies", sa, 10, ignore);
  const ChatReply rb = b.reply("Time flies", sb, 10, ignore);
  EXPECT_EQ(ra.text, rb.text);
  EXPECT_EQ(ra.n_reused, rb.n_reused);
  EXPECT_GT(rb.n_reused, 0);
}

TEST_F(ChatSessionTest, LoadValidatesAndLeavesTheSessionUnchangedOnError) {
  Context ctx(engine_, 256);
  ChatSession a(ctx, chat_template_for(engine_.model(), ""));
  a.clear("");
  Sampler sa(greedy());
  (void)a.reply("Hello", sa, 6, ignore);
  const std::string good = dir_.file("good");
  a.save(good);
  std::string bytes;
  {
    std::ifstream f(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& name, const std::string& b) {
    std::ofstream(dir_.file(name), std::ios::binary) << b;
    return dir_.file(name);
  };
  Context ctx2(engine_, 256);
  ChatSession b(ctx2, chat_template_for(engine_.model(), ""));
  b.clear("keep me");
  auto expect_error = [&](const std::string& path, const std::string& what) {
    try {
      b.load(path);
      ADD_FAILURE() << "no error for " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
    ASSERT_EQ(b.messages().size(), 1u);
    EXPECT_EQ(b.messages()[0].content, "keep me");
  };
  expect_error(write("magic", "NOTCHAT1" + bytes.substr(8)), "not an ork chat session file");
  expect_error(write("v1", "ORKCHAT1" + bytes.substr(8)), "session file format 1 (f32 KV rows");
  expect_error(write("short", bytes.substr(0, bytes.size() - 5)), "truncated");
  expect_error(write("long", bytes + "x"), "trailing bytes");
  expect_error(dir_.file("missing"), "cannot open");
  Context other(engine_, 128);  // another context size
  ChatSession c(other, chat_template_for(engine_.model(), ""));
  EXPECT_THROW(c.load(good), Error);
  ChatSession d(ctx2, chat_template_for(engine_.model(), "chatml"));  // another template
  EXPECT_THROW(d.load(good), Error);
}

// Every KV type saves and restores its own rows (the continuation equals the saved session's), and a
// session of one type is refused by a context of another, naming both.
TEST_F(ChatSessionTest, SaveAndLoadWithEachKvTypeAndRefuseAnother) {
  EXPECT_EQ(Context(engine_, 16).kv_type(), model::KvType::kF16);  // the default
  for (model::KvType t : {model::KvType::kF32, model::KvType::kF16, model::KvType::kQ8_0}) {
    EngineOptions o = options();
    o.kv_type = t;
    Engine e(o);
    Context ctx(e, 128), ctx2(e, 128);
    EXPECT_EQ(ctx.kv_type(), t);
    ChatSession a(ctx, chat_template_for(e.model(), "")), b(ctx2, chat_template_for(e.model(), ""));
    a.clear("");
    Sampler sa(greedy());
    (void)a.reply("A penny saved", sa, 6, ignore);
    const std::string path = dir_.file(std::string("s_") + model::kv_type_name(t));
    a.save(path);
    b.load(path);
    EXPECT_EQ(ctx2.state(), ctx.state()) << model::kv_type_name(t);
    Sampler s1(greedy()), s2(greedy());
    EXPECT_EQ(b.reply("Time flies", s2, 6, ignore).text, a.reply("Time flies", s1, 6, ignore).text);
    if (t != model::KvType::kF16) {
      Context other(engine_, 128);  // f16
      ChatSession c(other, chat_template_for(engine_.model(), ""));
      try {
        c.load(path);
        ADD_FAILURE() << "a " << model::kv_type_name(t) << " session loaded into an f16 context";
      } catch (const Error& err) {
        EXPECT_NE(std::string(err.what()).find(std::string("KV cache of type '") + model::kv_type_name(t) +
                                               "', this session's is f16"),
                  std::string::npos)
            << err.what();
      }
    }
  }
}

TEST_F(ChatSessionTest, InterruptKeepsThePartialReplyAndTheSessionGoesOn) {
  Context ctx(engine_, 256);
  ChatSession s(ctx, chat_template_for(engine_.model(), ""));
  s.clear("");
  Sampler sampler(greedy());
  int pieces = 0;
  const ChatReply r = s.reply("Never", sampler, 50, [&](const std::string&) { return ++pieces < 3; });
  EXPECT_EQ(r.stop, "interrupted");
  EXPECT_EQ(pieces, 3);
  ASSERT_EQ(s.messages().size(), 2u);
  EXPECT_EQ(s.messages()[1].content, r.text);
  const ChatReply r2 = s.reply("Again", sampler, 5, ignore);
  EXPECT_GT(r2.n_reused, 0);
}

TEST_F(ChatSessionTest, ATooLongMessageIsAnErrorAndChangesNothing) {
  Context ctx(engine_, 32);
  ChatSession s(ctx, chat_template_for(engine_.model(), ""));
  s.clear("");
  Sampler sampler(greedy());
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "many words here ";
  EXPECT_THROW((void)s.reply(long_text, sampler, 4, ignore), Error);
  EXPECT_TRUE(s.messages().empty());
  const ChatReply r = s.reply("Hi", sampler, 4, ignore);
  EXPECT_GT(r.n_gen, 0);
}

}  // namespace
}  // namespace ork::runtime
