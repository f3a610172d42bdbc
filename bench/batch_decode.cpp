// Continuous-batching benchmark (issue 16). Prints one JSON object.
//
// N streams (N = each --streams value) decode -n tokens each, concurrently, one thread and one
// Context per stream on one Engine, after a prefill of a prompt of their own (not timed):
//   batched — through runtime::DecodeBatcher, as `ork serve --parallel N` does: the streams' decode
//             steps in one forward pass (M = N rows per linear);
//   serial  — each stream's Context::eval of one token, serialized by the Engine's forward mutex, as
//             `ork serve --parallel N --no-cont-batching` does.
// aggregate_tok_s = N · n / the decode phase's wall time (MEASURED on this machine: medians and
// min/max over --reps runs; on --device sim the wall clock is the simulator's, not a board's).
// Usage: batch_decode [-m models/tiny-fortunes.gguf] [--device cpu] [--streams 1,2,4] [-n 64]
//                     [--reps 5] [--threads 2]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "core/error.h"
#include "core/json.h"
#include "runtime/context.h"
#include "runtime/decode_batcher.h"
#include "runtime/engine.h"
#include "runtime/sampler.h"

using namespace ork;

namespace {

struct Config {
  std::string model = "models/tiny-fortunes.gguf";
  std::string device = "cpu";
  std::vector<int> streams = {1, 2, 4};
  int n = 64, reps = 5, threads = 2;
};

// One run: wall seconds of N streams decoding n tokens each; mean rows per batched step in *rows.
double run(runtime::Engine& e, int n_streams, int n, bool batched, double* rows) {
  std::vector<std::unique_ptr<runtime::Context>> ctxs;
  std::vector<std::vector<float>> logits(static_cast<size_t>(n_streams));
  for (int s = 0; s < n_streams; ++s) {
    ctxs.push_back(std::make_unique<runtime::Context>(e, 64 + n));
    const std::vector<int32_t> prompt = {int32_t(10 + s), int32_t(20 + 7 * s), 30, int32_t(40 + s)};
    const float* l = ctxs.back()->eval(prompt);
    logits[size_t(s)].assign(l, l + ctxs.back()->n_vocab());
  }
  std::unique_ptr<runtime::DecodeBatcher> batcher;
  if (batched) batcher = std::make_unique<runtime::DecodeBatcher>(e);
  std::vector<std::optional<runtime::DecodeBatcher::Member>> members(static_cast<size_t>(n_streams));
  if (batched) {
    for (auto& m : members) m.emplace(batcher->join());
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int s = 0; s < n_streams; ++s) {
    threads.emplace_back([&, s] {
      runtime::SamplerParams sp;
      sp.seed = uint64_t(s + 1);
      runtime::Sampler sampler(sp);
      runtime::Context& ctx = *ctxs[size_t(s)];
      std::vector<float>& l = logits[size_t(s)];
      for (int i = 0; i < n; ++i) {
        const int32_t id = sampler.sample(l.data(), int32_t(l.size()));
        sampler.accept(id);
        if (batched) {
          batcher->decode(ctx, id, l.data());
        } else {
          const float* out = ctx.eval({id});
          std::copy(out, out + l.size(), l.begin());
        }
      }
      if (batched) members[size_t(s)].reset();
    });
  }
  for (std::thread& t : threads) t.join();
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (batched) {
    const runtime::DecodeBatcher::Stats st = batcher->stats();
    *rows = st.steps ? double(st.rows) / double(st.steps) : 0;
  } else {
    *rows = 1;
  }
  return sec;
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::atoi(item.c_str()));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if ((a == "-m" || a == "--model") && has) c.model = argv[++i];
    else if (a == "--device" && has) c.device = argv[++i];
    else if (a == "--streams" && has) c.streams = parse_list(argv[++i]);
    else if (a == "-n" && has) c.n = std::atoi(argv[++i]);
    else if (a == "--reps" && has) c.reps = std::atoi(argv[++i]);
    else if (a == "--threads" && has) c.threads = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "batch_decode: unknown or incomplete argument '%s' (see the header of bench/batch_decode.cpp)\n",
                   a.c_str());
      return 2;
    }
  }
  bool streams_ok = !c.streams.empty();
  for (int s : c.streams) streams_ok = streams_ok && s >= 1 && s <= 64;
  if (c.n < 1 || c.reps < 1 || !streams_ok) {
    std::fprintf(stderr, "batch_decode: need -n >= 1, --reps >= 1, --streams of values in [1, 64]\n");
    return 2;
  }
  if (!std::filesystem::exists(c.model)) {
    std::fprintf(stderr, "batch_decode: model file '%s' not found (-m PATH; run from the repository root)\n",
                 c.model.c_str());
    return 2;
  }
  try {
    runtime::EngineOptions eo;
    eo.model_path = c.model;
    eo.device = c.device;
    eo.threads = c.threads;
    runtime::Engine e(eo);
    JsonWriter j;
    j.begin_object();
    j.key("benchmark").value("batch_decode");
    j.key("machine").value(bench::machine_name());
    j.key("model").value(c.model);
    j.key("device").value(e.device_name());
    j.key("threads").value(e.threads());
    j.key("tokens_per_stream").value(c.n);
    j.key("reps").value(c.reps);
    j.key("timing").value(c.device == "cpu" ? "measured wall clock" : "measured wall clock of the simulator (not a board time)");
    j.key("runs").begin_array();
    for (int n_streams : c.streams) {
      for (bool batched : {false, true}) {
        std::vector<double> tok_s;
        double rows = 0;
        run(e, n_streams, std::min(c.n, 8), batched, &rows);  // warm-up
        for (int r = 0; r < c.reps; ++r) tok_s.push_back(double(n_streams) * c.n / run(e, n_streams, c.n, batched, &rows));
        j.begin_object();
        j.key("streams").value(n_streams);
        j.key("mode").value(batched ? "batched" : "serial");
        j.key("aggregate_tok_s_median").value(bench::median(tok_s));
        j.key("aggregate_tok_s_min").value(*std::min_element(tok_s.begin(), tok_s.end()));
        j.key("aggregate_tok_s_max").value(*std::max_element(tok_s.begin(), tok_s.end()));
        j.key("mean_rows_per_step").value(rows);
        j.end_object();
      }
    }
    j.end_array();
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "batch_decode: %s\n", ex.what());
    return 1;
  }
  return 0;
}
