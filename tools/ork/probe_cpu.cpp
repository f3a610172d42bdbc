#include "probe_cpu.h"

#include <cstdio>

#include "args.h"
#include "compute_probe.h"
#include "core/json.h"
#include "core/machine.h"
#include "core/thread_pool.h"
#include "memory_bandwidth.h"

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kCpuOptions = {
    {{"-t", "--threads"}, true, "threads (default: all cores)"},
    {{"--pin"}, false, "pin threads to CPUs, fastest cores first (as ork bench --pin)"},
    {{"--passes"}, true, "timed passes of each measurement, the best one kept (default 3, as ork bench's paired ones)"},
    {{"--bw-mib"}, true, "MiB of the read buffer (default 256; keep it far above the last-level cache)"},
    {{"--json"}, false, "print the result as JSON"},
    {{"-h", "--help"}, false, "this help"},
};

}  // namespace

int probe_cpu(const std::vector<std::string>& argv) {
  const Args args("probe cpu", kCpuOptions, argv);
  if (args.has("--help")) {
    std::printf("usage: ork probe cpu [-t N] [--pin] [--passes 3] [--bw-mib 256] [--json]\n\n%s",
                format_options(kCpuOptions).c_str());
    return 0;
  }
  const int threads = int(args.get_int("--threads", 0, 0, 4096));
  const int passes = int(args.get_int("--passes", 3, 1, 1000));
  const size_t bw_bytes = size_t(args.get_int("--bw-mib", 256, 1, 1 << 16)) << 20;
  ThreadPool pool(threads, args.has("--pin"));
  double read_gbs = 0;
  bool huge_pages = false;
  {
    ReadProbe probe(pool, bw_bytes);
    read_gbs = probe.gbs(passes);
    huge_pages = probe.huge_pages_advised();
  }
  ComputeProbe compute(pool);
  const ComputeProbe::Rate rate = compute.measure(passes);
  if (args.has("--json")) {
    JsonWriter j;
    j.begin_object();
    j.key("machine").value(machine_name());
    j.key("threads").value(pool.size());
    j.key("read_gb_per_s").value(read_gbs);
    j.key("read_buffer_huge_pages").value(huge_pages);
    j.key("compute_gb_per_s").value(rate.all_gbs);
    j.key("compute_one_thread_gb_per_s").value(rate.one_gbs);
    j.key("compute_cores").value(rate.cores());
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("%s, %d thread%s\n", machine_name().c_str(), pool.size(), pool.size() == 1 ? "" : "s");
    std::printf("read: %.2f GB/s (%zu MiB, best of %d)\n", read_gbs, bw_bytes >> 20, passes);
    std::printf("%s: %.2f threads' worth\n", rate.describe(pool.size()).c_str(), rate.cores());
  }
  return 0;
}

}  // namespace ork::cli
