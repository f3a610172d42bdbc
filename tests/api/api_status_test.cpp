// C API statuses: a callback that calls back into its own context gets an error status (no deadlock);
// ork_model_load's status comes from the error's type, not from words in its message.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gen_model/gen_model.h"
#include "gguf/writer.h"
#include "model/rewrite_gguf.h"
#include "model/temp_dir.h"
#include "ork/ork.h"

namespace {

std::string write_model(const ork::testing::TempDir& dir) {
  ork::gen::ModelSpec s;
  s.n_embd = 128;
  s.n_ff = 256;
  s.n_layer = 2;
  s.n_vocab = 512;
  s.weight_type = ork::quant::Type::Q8_0;
  const std::string path = dir.file("m.gguf");
  ork::gen::write_model(s, path);
  return path;
}

struct Reentry {
  ork_context* ctx = nullptr;
  int eval_status = 1, n_past_status = 1, calls = 0;
  std::string message;
};

int on_token(int32_t token, void* user) {
  auto* r = static_cast<Reentry*>(user);
  const float* logits = nullptr;
  r->eval_status = ork_eval(r->ctx, &token, 1, &logits);
  r->message = ork_last_error();
  int64_t n_past = 0;
  r->n_past_status = ork_context_n_past(r->ctx, &n_past);
  return ++r->calls < 3 ? 0 : 1;  // non-zero stops the generation
}

// The scenario, run in a child process so that a deadlock is a timeout, not a hung test binary.
// Exit status: 0 as expected, 1 a wrong status, 2 a setup failure.
int reentrant_generate(const std::string& path) {
  ork_model_options o;
  ork_model_options_init(&o);
  o.device = "cpu";
  o.threads = 1;
  ork_model* m = nullptr;
  ork_context* c = nullptr;
  ork_sampler* s = nullptr;
  ork_sampler_params sp;
  ork_sampler_params_init(&sp);
  if (ork_model_load(path.c_str(), &o, &m) != ORK_OK || ork_context_create(m, 32, &c) != ORK_OK ||
      ork_sampler_create(&sp, &s) != ORK_OK) {
    return 2;
  }
  Reentry r;
  r.ctx = c;
  const int32_t prompt[] = {1, 7, 300};
  int64_t n = 0;
  int32_t out[8];
  const int st = ork_generate(c, s, prompt, 3, 8, out, 8, &n, on_token, &r);
  const bool ok = st == ORK_OK && r.calls > 0 && r.eval_status == ORK_ERR_INVALID_ARG &&
                  r.n_past_status == ORK_ERR_INVALID_ARG &&
                  r.message.find("inside a callback") != std::string::npos;
  // The context works again once the call has returned.
  const float* logits = nullptr;
  const int32_t next = 5;
  const bool after = ork_eval(c, &next, 1, &logits) == ORK_OK;
  ork_sampler_free(s);
  ork_context_free(c);
  ork_model_free(m);
  return ok && after ? 0 : 1;
}

TEST(ApiStatus, ACallbackCallingItsOwnContextGetsAnErrorNotADeadlock) {
  ork::testing::TempDir dir;
  const std::string path = write_model(dir);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(reentrant_generate(path));
  int status = 0;
  bool done = false;
  for (int i = 0; i < 600 && !done; ++i) {  // 60 s
    done = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!done) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "ork_eval from inside ork_generate's callback deadlocked";
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: wrong status or message, 2: setup failed";
}

TEST(ApiStatus, LoadStatusFollowsTheErrorTypeNotItsWords) {
  ork::testing::TempDir dir;
  const std::string good = write_model(dir), bad = dir.file("bad.gguf");
  // A bad file whose message names "NPU", "IOMMU", "window" and "resident" is still a load error.
  ork::testing::rewrite(good, bad, {{"general.architecture"}, {}, [](ork::gguf::Writer& w) {
                                      w.add_string("general.architecture", "NPU IOMMU window resident");
                                    }});
  ork_model_options o;
  ork_model_options_init(&o);
  o.device = "sim";
  ork_model* m = nullptr;
  EXPECT_EQ(ork_model_load(bad.c_str(), &o, &m), ORK_ERR_LOAD) << ork_last_error();
  EXPECT_NE(std::string(ork_last_error()).find("unsupported architecture"), std::string::npos);
  // No NPU on this machine: the device refuses a good file.
  o.device = "npu";
  EXPECT_EQ(ork_model_load(good.c_str(), &o, &m), ORK_ERR_DEVICE) << ork_last_error();
}

}  // namespace
