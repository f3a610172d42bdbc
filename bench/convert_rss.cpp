// Peak RSS of `ork convert` (weights::convert) of a ≥ 1 GB model, with and without --evict-src.
// Each conversion runs in a forked child (VmHWM is per process); the child reports its
// ConvertResult through a pipe. Prints one JSON object naming the machine.
// Target (issue 5): with --evict-src under 400 MB, and well above that without.
//
// usage: convert_rss [--model PATH.gguf] [--threads N]
//   default model: a generated q8_0 llama (n_embd 2048, n_ff 6144, 16 layers, vocab 32000,
//   ≈ 1.07 GB) in $TMPDIR, removed afterwards.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "bench_util.h"
#include "core/env.h"
#include "core/json.h"
#include "core/timer.h"
#include "gen_model/gen_model.h"
#include "model/model.h"
#include "weights/convert.h"

namespace {

struct Run {
  ork::weights::ConvertResult r;
  bool ok = false;
};

Run run_child(const std::string& model_path, const std::string& out, bool evict, int threads) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ork::weights::ConvertResult r{};
    int status = 1;
    try {
      const auto model = ork::model::Model::load(model_path);
      ork::weights::ConvertOptions o;
      o.output_path = out;
      o.evict_src = evict;
      o.threads = threads;
      r = ork::weights::convert(*model, o);
      status = 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "convert failed: %s\n", e.what());
    }
    if (::write(fds[1], &r, sizeof r) != ssize_t(sizeof r)) status = 1;
    ::_exit(status);
  }
  ::close(fds[1]);
  Run run;
  const bool got = ::read(fds[0], &run.r, sizeof run.r) == ssize_t(sizeof run.r);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.ok = got && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ork;
  std::string model_path;
  int threads = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--model") model_path = argv[i + 1];
    else if (a == "--threads") threads = int(parse_int(argv[i + 1], "--threads", 1, 1024));
  }
  const auto tmp = std::filesystem::temp_directory_path();
  const std::string pid = std::to_string(::getpid());
  bool generated = false;
  double gen_ms = 0;
  if (model_path.empty()) {
    gen::ModelSpec s = gen::preset("tiny-llama");
    s.weight_type = quant::Type::Q8_0;
    s.n_embd = 2048;
    s.n_ff = 6144;
    s.n_head = 16;
    s.n_head_kv = 16;
    s.n_layer = 16;
    s.n_vocab = 32000;
    model_path = (tmp / ("ork-bench-rss-" + pid + ".gguf")).string();
    Stopwatch sw;
    gen::write_model(s, model_path);
    gen_ms = sw.elapsed_ms();
    generated = true;
  }
  const uint64_t model_bytes = std::filesystem::file_size(model_path);
  const std::string out = (tmp / ("ork-bench-rss-" + pid + ".orkpack")).string();
  const Run evict = run_child(model_path, out, true, threads);
  std::filesystem::remove(out);
  const Run keep = run_child(model_path, out, false, threads);
  std::filesystem::remove(out);
  if (generated) std::filesystem::remove(model_path);

  JsonWriter j;
  j.begin_object();
  j.key("bench").value("convert_rss");
  j.key("machine").value(bench::machine_name());
  j.key("model_bytes").value(model_bytes);
  if (generated) j.key("generate_ms").value(gen_ms);
  auto put = [&](const char* name, const Run& r) {
    j.key(name).begin_object();
    j.key("ok").value(r.ok);
    j.key("weights").value(r.r.weights);
    j.key("bytes").value(r.r.bytes);
    j.key("ms").value(r.r.ms);
    j.key("peak_rss_bytes").value(r.r.peak_rss_bytes);
    j.end_object();
  };
  put("evict_src", evict);
  put("no_evict", keep);
  j.key("target_evict_peak_bytes").value(uint64_t(400) << 20);
  j.key("evict_under_target").value(evict.r.peak_rss_bytes < (uint64_t(400) << 20));
  j.end_object();
  std::printf("%s\n", j.str().c_str());
  return evict.ok && keep.ok ? 0 : 1;
}
