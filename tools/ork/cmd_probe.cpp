// ork probe — the NPU probes a board owner runs first: dma (the IOVA wall per domain), stream
// (cycling weights through the window without leaking), matmul (the parity self-test).
#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "device_flags.h"
#include "core/error.h"
#include "npu/device.h"
#include "npu/probe_dma.h"
#include "npu/probe_matmul.h"
#include "npu/probe_stream.h"
#include "probe_persist.h"

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kProbeOptions = {
    {{"--device"}, true, "npu | sim | auto (default: npu when present, else sim)"},
    {{"--chunk-mb"}, true, "dma: buffer size in MiB (default 64)"},
    {{"--domains"}, true, "dma: domains to fill (default 1)"},
    {{"--iters"}, true, "stream: weights to pack and free (default 100)"},
    {{"--mb"}, true, "stream: weight size in MiB (default 268)"},
    {{"--json"}, false, "print the result as JSON"},
    {{"-h", "--help"}, false, "this help"},
};

const char* kProbeUsage =
    "usage: ork probe (dma | stream | matmul | persist) [options]\n"
    "  dma      allocate buffers until the IOVA window is full, in each domain\n"
    "  stream   pack a weight, free it, repeat: IOVA must come back every time\n"
    "  matmul   run the matmul parity suite on the device against the CPU\n"
    "  persist  per weight: pack vs load-from-.orkpack time and a byte-identical round trip\n"
    "           (ork probe persist --help)\n\n";

}  // namespace

int cmd_probe(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h") {
    std::printf("%s%s", kProbeUsage, format_options(kProbeOptions).c_str());
    return argv.empty() ? 2 : 0;
  }
  const std::string which = argv[0];
  if (which == "persist") return probe_persist(std::vector<std::string>(argv.begin() + 1, argv.end()));
  if (which != "dma" && which != "stream" && which != "matmul") {
    throw UsageError{"unknown probe '" + which + "' (dma, stream, matmul, persist)"};
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
  const npu::MatmulProbeResult r = npu::probe_matmul(*device);
  if (json) {
    std::printf("%s\n", r.to_json().c_str());
  } else {
    for (const auto& s : r.shapes) {
      std::printf("%-4s m=%-4lld k=%-6lld n=%-6lld %s  max_err %g%s%s\n", npu::dtype_name(s.dtype),
                  (long long)s.m, (long long)s.k, (long long)s.n, s.ok ? "ok  " : "FAIL", s.max_err,
                  s.error.empty() ? "" : "  ", s.error.c_str());
    }
    std::printf("%d passed, %d failed\n", r.passed, r.failed);
  }
  return r.failed == 0 ? 0 : 1;
}

}  // namespace ork::cli
