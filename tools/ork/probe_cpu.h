// ork probe cpu — what the CPU gives a decode at this moment: the memory's read rate (ReadProbe) and
// the arithmetic the threads get (ComputeProbe: how many threads' worth), measured as `ork bench`
// measures them around each decode repetition. bench/compare_llama_bench.sh runs it before and after
// each llama-bench run, so llama.cpp's decode can be split by the same machine states as ork's.
#pragma once

#include <string>
#include <vector>

namespace ork::cli {

// Runs the probe for argv (the arguments after "probe cpu"); returns the exit status.
int probe_cpu(const std::vector<std::string>& argv);

}  // namespace ork::cli
