// ork probe — the NPU probes a board owner runs first: matmul (the parity self-test, in phases),
// dma (the IOVA wall per domain), stream (cycling weights through the window without leaking),
// report (all of them in one file for a bug report), regcmd (the exact register commands of a matmul);
// and cpu (the memory's read rate and the threads' arithmetic, for the CPU path).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "device_flags.h"
#include "core/error.h"
#include "npu/device.h"
#include "npu/probe_dma.h"
#include "npu/probe_matmul.h"
#include "npu/probe_regcmd.h"
#include "npu/probe_stream.h"
#include "probe_calibrate.h"
#include "probe_cpu.h"
#include "probe_persist.h"
#include "probe_report.h"

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kProbeOptions = {
    {{"--device"}, true, "npu | sim | auto (default: npu when present, else sim)"},
    {{"--chunk-mb"}, true, "dma: buffer size in MiB (default 64)"},
    {{"--domains"}, true, "dma: domains to fill (default 1)"},
    {{"--iters"}, true, "stream: weights to pack and free (default 100)"},
    {{"--mb"}, true, "stream: weight size in MiB (default 268)"},
    {{"--keep-going"}, false, "matmul: run every shape even after a failure"},
    {{"--json"}, false, "print the result as JSON"},
    {{"-h", "--help"}, false, "this help"},
};

const char* kProbeUsage =
    "usage: ork probe (matmul | dma | stream | report | regcmd | persist | calibrate | cpu) [options]\n"
    "  matmul   the matmul parity suite on the device against the CPU: one-task shapes, then\n"
    "           chained tasks on one core, then all cores; stops at the first failure\n"
    "  dma      allocate buffers until the IOVA window is full, in each domain\n"
    "  stream   pack a weight, free it, repeat: IOVA must come back every time\n"
    "  report   every probe and the kernel log tail in one JSON file for a bug report\n"
    "           (ork probe report --help)\n"
    "  regcmd   print the register commands ork submits for one matmul (ork probe regcmd --help)\n"
    "  persist  per weight: pack vs load-from-.orkpack time and a byte-identical round trip\n"
    "           (ork probe persist --help)\n"
    "  calibrate  measure the board cost model's parameters and write a board profile\n"
    "           (ork probe calibrate --help)\n"
    "  cpu      the memory's read rate and how many threads' worth of arithmetic the threads get\n"
    "           now, as ork bench measures them around each decode (ork probe cpu --help)\n\n";

const std::vector<OptionSpec> kRegcmdOptions = {
    {{"--dtype"}, true, "i8 | f16 (default i8)"},
    {{"-m"}, true, "rows of A and C"},
    {{"-k"}, true, "the reduction length"},
    {{"-n"}, true, "columns of C (rows of the weight)"},
    {{"--cores"}, true, "cores to plan for, 1..3 (default 3)"},
    {{"--addr-a"}, true, "NPU address of the A scratch, hex (default 0x10000000)"},
    {{"--addr-b"}, true, "NPU address of the packed weight, hex (default 0x20000000)"},
    {{"--addr-c"}, true, "NPU address of the C scratch, hex (default 0x30000000)"},
    {{"--addr-regcmd"}, true, "NPU address of the register commands, hex (default 0x40000000)"},
    {{"--json"}, false, "print the result as JSON"},
    {{"-h", "--help"}, false, "this help"},
};

uint64_t hex_arg(const Args& args, const std::string& name, uint64_t def) {
  const auto v = args.get(name);
  if (!v) return def;
  const std::string s = v->rfind("0x", 0) == 0 || v->rfind("0X", 0) == 0 ? v->substr(2) : *v;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = s.empty() ? 0 : std::strtoull(s.c_str(), &end, 16);
  if (s.empty() || errno != 0 || *end != '\0' || x >= (1ull << 32) || x % 64 != 0) {
    throw UsageError{name + ": '" + *v + "' is not a 64-byte aligned hex address below 4 GiB"};
  }
  return x;
}

int probe_regcmd(const std::vector<std::string>& argv) {
  const Args args("probe regcmd", kRegcmdOptions, argv);
  if (args.has("--help")) {
    std::printf("usage: ork probe regcmd --dtype i8|f16 -m M -k K -n N [--cores C] [--addr-a HEX --addr-b HEX "
                "--addr-c HEX --addr-regcmd HEX] [--json]\n%s", format_options(kRegcmdOptions).c_str());
    return 0;
  }
  const std::string dtype = args.get_or("--dtype", "i8");
  if (dtype != "i8" && dtype != "f16") throw UsageError{"--dtype: '" + dtype + "' is not one of i8, f16"};
  for (const char* need : {"-m", "-k", "-n"}) {
    if (!args.has(need)) throw UsageError{std::string("probe regcmd: ") + need + " is required"};
  }
  const int64_t m = args.get_int("-m", 1, 1, npu::kMaxDim), k = args.get_int("-k", 1, 1, npu::kMaxDim);
  const int64_t n = args.get_int("-n", 1, 1, npu::kMaxDim);
  const uint32_t cores = uint32_t(args.get_int("--cores", 3, 1, 3));
  const npu::TaskAddresses addr{hex_arg(args, "--addr-a", 0x10000000), hex_arg(args, "--addr-b", 0x20000000),
                                hex_arg(args, "--addr-c", 0x30000000), hex_arg(args, "--addr-regcmd", 0x40000000)};
  const npu::RegcmdDump d =
      npu::dump_regcmd(dtype == "i8" ? npu::Dtype::kI8 : npu::Dtype::kF16, m, k, n, cores, addr);
  std::printf("%s%s", args.has("--json") ? d.to_json().c_str() : d.to_text().c_str(), args.has("--json") ? "\n" : "");
  return 0;
}

}  // namespace

int cmd_probe(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h") {
    std::printf("%s%s", kProbeUsage, format_options(kProbeOptions).c_str());
    return argv.empty() ? 2 : 0;
  }
  const std::string which = argv[0];
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (which == "persist") return probe_persist(rest);
  if (which == "report") return probe_report(rest);
  if (which == "regcmd") return probe_regcmd(rest);
  if (which == "calibrate") return probe_calibrate(rest);
  if (which == "cpu") return probe_cpu(rest);
  if (which != "dma" && which != "stream" && which != "matmul") {
    throw UsageError{"unknown probe '" + which + "' (matmul, dma, stream, report, regcmd, persist, calibrate, cpu)"};
  }
  std::vector<OptionSpec> specs = kProbeOptions;
  specs.insert(specs.end(), kSimOptions.begin(), kSimOptions.end());
  const Args args("probe " + which, specs,
                  std::vector<std::string>(argv.begin() + 1, argv.end()));
  if (args.has("--help")) {
    std::printf("%s%s", kProbeUsage, format_options(specs).c_str());
    return 0;
  }
  const bool json = args.has("--json");
  npu::DeviceOptions dopts = device_options(args, "auto");
  if (dopts.kind != "npu" && dopts.kind != "sim" && dopts.kind != "auto") {
    throw UsageError{"--device: '" + dopts.kind + "' is not one of npu, sim, auto"};
  }
  if (dopts.sim_timing_only && which != "dma") {
    throw UsageError{"--sim-timing-only skips the arithmetic: probe " + which + " needs it"};
  }
  const auto device = npu::Device::open(dopts);
  const npu::Capabilities& caps = device->caps();
  if (!json) {
    std::printf("device: %s, %u cores, %u domains of %llu MiB, driver %u.%u.%u\n", caps.name.c_str(),
                caps.cores, caps.domains, (unsigned long long)(caps.window_bytes >> 20),
                caps.driver_version / 10000, caps.driver_version / 100 % 100,
                caps.driver_version % 100);
  }

  if (which == "dma") {
    const uint64_t chunk = uint64_t(args.get_int("--chunk-mb", 64, 1, 4096)) << 20;
    const uint32_t domains = uint32_t(args.get_int("--domains", 1, 1, 16));
    const npu::DmaProbeResult r = npu::probe_dma(*device, chunk, domains);
    if (json) {
      std::printf("%s\n", r.to_json().c_str());
    } else {
      for (const auto& d : r.domains) {
        std::printf("domain %2u: %llu buffers of %llu MiB mapped (%.2f GB), then errno %d\n", d.id,
                    (unsigned long long)d.buffers, (unsigned long long)(chunk >> 20),
                    double(d.bytes) / 1e9, d.err);
      }
      std::printf("total: %.2f GB\n", double(r.total_bytes) / 1e9);
    }
    return 0;
  }
  if (which == "stream") {
    const uint64_t iters = uint64_t(args.get_int("--iters", 100, 1, 1000000));
    const uint64_t bytes = uint64_t(args.get_int("--mb", 268, 1, 2048)) << 20;
    const npu::StreamProbeResult r = npu::probe_stream(*device, iters, bytes);
    if (json) {
      std::printf("%s\n", r.to_json().c_str());
    } else {
      std::printf("%llu weights of %.1f MB packed and freed: %.1f GB cycled, peak resident %.1f MB, "
                  "leaked IOVA %llu bytes, first weight verified: %s\n",
                  (unsigned long long)r.iters, double(r.weight_bytes) / 1e6,
                  double(r.bytes_cycled) / 1e9, double(r.peak_resident_bytes) / 1e6,
                  (unsigned long long)r.leaked_iova_bytes, r.verified ? "yes" : "no");
    }
    return r.leaked_iova_bytes == 0 && r.verified ? 0 : 1;
  }
  const npu::MatmulProbeResult r = npu::probe_matmul(*device, 0, args.has("--keep-going"));
  if (json) {
    std::printf("%s\n", r.to_json().c_str());
  } else {
    for (const auto& s : r.shapes) {
      std::printf("%-11s %-4s m=%-4lld k=%-6lld n=%-6lld cores=%u tasks=%-3llu %s  max_err %g%s%s\n",
                  npu::phase_name(s.phase), npu::dtype_name(s.dtype), (long long)s.m, (long long)s.k,
                  (long long)s.n, s.cores, (unsigned long long)s.tasks, s.ok ? "ok  " : "FAIL", s.max_err,
                  s.error.empty() ? "" : "  ", s.error.c_str());
    }
    if (r.stopped) {
      const auto& s = r.shapes.back();
      std::printf("stopped at the first failure: %s %s m=%lld k=%lld n=%lld on %u core(s) (--keep-going runs "
                  "the rest).%s\n",
                  npu::phase_name(s.phase), npu::dtype_name(s.dtype), (long long)s.m, (long long)s.k,
                  (long long)s.n, s.cores,
                  caps.simulated ? "" : " Please send this output, 'sudo dmesg | tail -50' and "
                                        "'ork probe report --device npu' with a bug report.");
    }
    std::printf("%d passed, %d failed\n", r.passed, r.failed);
  }
  return r.failed == 0 ? 0 : 1;
}

}  // namespace ork::cli
