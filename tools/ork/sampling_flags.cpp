#include "sampling_flags.h"

#include <climits>
#include <random>

namespace ork::cli {

const std::vector<OptionSpec> kSamplingOptions = {
    {{"--temp"}, true, "temperature (default 0.8; 0: greedy)"},
    {{"--top-k"}, true, "top-k sampling (default 40; 0: off)"},
    {{"--top-p"}, true, "top-p sampling (default 0.95; 1: off)"},
    {{"--min-p"}, true, "min-p sampling (default 0.05; 0: off)"},
    {{"--repeat-penalty"}, true, "repetition penalty (default 1.0: off)"},
    {{"--repeat-last-n"}, true, "tokens the repetition penalty looks back (default 64)"},
    {{"-s", "--seed"}, true, "sampling seed (default: random)"},
};

runtime::SamplerParams sampler_params(const Args& args) {
  runtime::SamplerParams sp;
  sp.temperature = float(args.get_double("--temp", 0.8, 0.0, 1e6));
  sp.top_k = int(args.get_int("--top-k", 40, 0, INT32_MAX));
  sp.top_p = float(args.get_double("--top-p", 0.95, 1e-9, 1.0));
  sp.min_p = float(args.get_double("--min-p", 0.05, 0.0, 1.0));
  sp.repeat_penalty = float(args.get_double("--repeat-penalty", 1.0, 1e-6, 1e6));
  sp.repeat_last_n = int(args.get_int("--repeat-last-n", 64, 0, INT32_MAX));
  const int64_t seed = args.get_int("--seed", -1, -1, INT64_MAX);
  sp.seed = seed >= 0 ? uint64_t(seed) : (uint64_t(std::random_device{}()) << 32 | std::random_device{}());
  return sp;
}

}  // namespace ork::cli
