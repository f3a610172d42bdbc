// `ork chat` driven through pipes: multi-turn with the KV cache kept, /save, /clear, /load, errors as
// one line, and Ctrl-C (SIGINT) stopping a reply while the session goes on.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "build_dirs.h"
#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

using testing::run_ork;

TEST(ChatCli, TurnsReuseTheCacheAndSessionsSaveAndLoad) {
  testing::TempDir dir;
  const std::string in = dir.file("in.txt"), session = dir.file("s.orkchat");
  std::ofstream(in) << "The best thing about a computer is\nLove is\n/save " << session
                    << "\n/clear\n/load " << session << "\nAnd\n/bogus\n";
  const auto r = run_ork("chat --temp 0 -n 16 --stats < " + in, dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("(0 reused from the cache"), std::string::npos) << r.err;
  // Turn 2 evaluates only what follows the cached turn 1 (9 prompt + 15 evaluated reply tokens).
  EXPECT_NE(r.err.find("(24 reused from the cache"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("saved " + session + ": 4 messages"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("loaded " + session + ": 4 messages"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown command '/bogus'"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(session));
  EXPECT_EQ(int(std::count(r.out.begin(), r.out.end(), '\n')) >= 3, true) << r.out;

  // The same input again gives the same text (greedy), also after the /load.
  const auto r2 = run_ork("chat --temp 0 -n 16 < " + in, dir);
  ASSERT_EQ(r2.status, 0) << r2.err;
  EXPECT_EQ(r2.out, r.out);
}

TEST(ChatCli, BadInputIsOneErrorLine) {
  testing::TempDir dir;
  auto r = run_ork("chat --chat-template nope < /dev/null", dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "ork: error: unknown chat template 'nope' (known: chatml, llama3, llama2, llama2-sys-bos, "
                   "llama2-sys-strip, mistral-v1, mistral-v3, mistral-v3-tekken, mistral-v7, gemma, phi3, "
                   "deepseek, deepseek2, deepseek3, ork-fortunes)\n");
  const std::string m = dir.file("m.gguf");
  gen::write_model(gen::preset("tiny-llama"), m);
  r = run_ork("chat -m " + m + " < /dev/null", dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("has no tokenizer.chat_template; give one with --chat-template NAME"), std::string::npos)
      << r.err;
  r = run_ork("chat -m " + m + " --chat-template chatml < /dev/null", dir);
  EXPECT_EQ(r.status, 0) << r.err;
  // A bad session file is an error for that command only; the chat goes on.
  const std::string in = dir.file("in.txt");
  std::ofstream(in) << "/load " << m << "\nHello\n";
  r = run_ork("chat --temp 0 -n 4 --stats < " + in, dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("not an ork chat session file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("generated"), std::string::npos) << r.err;
}

// SIGINT during a reply (a greedy loop that would run until a 60000-token context is full) stops it;
// the next command still runs and the program ends normally at end of input.
TEST(ChatCli, CtrlCStopsAReplyAndKeepsTheSession) {
  testing::TempDir dir;
  const std::string session = dir.file("s.orkchat");
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  const std::string ork = ork::testing::binary_dir() + "/ork";
  const std::string err = dir.file("err.txt");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(e, 2);
    close(to_child[1]);
    close(from_child[0]);
    execl(ork.c_str(), ork.c_str(), "chat", "--temp", "0", "-c", "60000", "-t", "1", "--stats",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  const std::string line = "of the morning of the morning of the\n";
  ASSERT_EQ(write(to_child[1], line.data(), line.size()), ssize_t(line.size()));
  char buf[256];
  ASSERT_GT(read(from_child[0], buf, sizeof buf), 0);  // the reply has started
  kill(pid, SIGINT);
  const std::string rest = "/save " + session + "\n";
  ASSERT_EQ(write(to_child[1], rest.data(), rest.size()), ssize_t(rest.size()));
  close(to_child[1]);
  while (read(from_child[0], buf, sizeof buf) > 0) {
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::ifstream ef(err);
  const std::string e((std::istreambuf_iterator<char>(ef)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << e;
  EXPECT_EQ(WEXITSTATUS(status), 0) << e;
  EXPECT_NE(e.find("ork: reply stopped"), std::string::npos) << e;
  EXPECT_NE(e.find("stop interrupted"), std::string::npos) << e;
  EXPECT_NE(e.find("saved " + session + ": 2 messages"), std::string::npos) << e;
}

// `ork run --chat-template` renders -p as one user turn: the reply is the one `ork chat` gives to
// that line (greedy), and a name it does not know, or token ids instead of text, is one error line.
TEST(ChatCli, RunWithAChatTemplateRepliesAsChatDoes) {
  testing::TempDir dir;
  const std::string in = dir.file("in.txt");
  std::ofstream(in) << "Love is\n";
  const auto chat = run_ork("chat --temp 0 -n 8 -t 1 < " + in, dir);
  ASSERT_EQ(chat.status, 0) << chat.err;
  const auto run = run_ork("run -p 'Love is' --chat-template model --temp 0 -n 8 -t 1", dir);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "Love is" + chat.out);  // both end with a newline
  const auto plain = run_ork("run -p 'Love is' --temp 0 -n 8 -t 1", dir);
  EXPECT_NE(plain.out, run.out);  // without the template the model continues the raw text

  auto r = run_ork("run -p x --chat-template nope", dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("unknown chat template 'nope'"), std::string::npos) << r.err;
  r = run_ork("run --prompt-tokens 1,2 --chat-template chatml", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--chat-template renders text"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ork
