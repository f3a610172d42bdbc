// ork bench's speculative-decoding test (with --draft or --lookup): greedy generation of n_gen
// tokens after a fixed prompt, target-only and with the draft, `reps` times each, interleaved.
#pragma once

#include <cstdint>

#include "args.h"
#include "core/json.h"
#include "runtime/engine.h"

namespace ork::cli {

// Runs the test on `target` (with `draft`, load_draft's, or null for --lookup) and writes its figures into `j` (an open object) under "speculative",
// or prints them as text when j is null. Wall-clock figures are measured on this machine; on the
// simulator the modeled board time of the target's (and a simulated draft's) NPU jobs is added,
// labelled modeled, with the board profile's name.
void bench_speculative(const Args& args, runtime::Engine& target, runtime::Engine* draft, int64_t n_gen, int reps,
                       JsonWriter* j);

}  // namespace ork::cli
