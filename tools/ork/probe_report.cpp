#include "probe_report.h"

#include <sys/klog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "args.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json.h"
#include "device_flags.h"
#include "npu/probe_dma.h"
#include "npu/probe_matmul.h"
#include "npu/probe_stream.h"

namespace ork::cli {

namespace {

constexpr int kSyslogActionReadAll = 3;   // klogctl(2)
constexpr int kSyslogActionSizeBuffer = 10;

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::vector<std::string> kernel_log_tail(size_t lines, std::string* error) {
  const int size = ::klogctl(kSyslogActionSizeBuffer, nullptr, 0);
  std::vector<char> buf(size_t(size > 0 ? size : 1 << 17));
  const int n = ::klogctl(kSyslogActionReadAll, buf.data(), int(buf.size()));
  if (n < 0) {
    if (error) {
      *error = str_cat(std::strerror(errno), errno == EPERM ? ": run as root or set kernel.dmesg_restrict=0" : "");
    }
    return {};
  }
  std::vector<std::string> all;
  std::string cur;
  for (int i = 0; i < n; ++i) {
    if (buf[size_t(i)] == '\n') {
      all.push_back(cur);
      cur.clear();
    } else {
      cur += buf[size_t(i)];
    }
  }
  if (!cur.empty()) all.push_back(cur);
  if (all.size() > lines) all.erase(all.begin(), all.end() - std::ptrdiff_t(lines));
  return all;
}

std::string probe_report_json(npu::Device& device) {
  const npu::Capabilities& caps = device.caps();
  JsonWriter j;
  j.begin_object();
  j.key("ork_version").value(ORK_VERSION_STRING);
  j.key("time_utc").value(utc_now());
  j.key("device").begin_object();
  j.key("name").value(caps.name).key("simulated").value(caps.simulated);
  j.key("driver_version").value(str_cat(caps.driver_version / 10000, ".", caps.driver_version / 100 % 100, ".",
                                        caps.driver_version % 100));
  j.key("cores").value(uint64_t(caps.cores)).key("domains").value(uint64_t(caps.domains));
  j.key("window_bytes").value(caps.window_bytes);
  j.end_object();
  j.key("probes").begin_object();
  // Each probe on its own: one that throws is reported and the others still run.
  auto run = [&](const char* name, auto probe) {
    j.key(name);
    try {
      j.raw(probe());
    } catch (const Error& e) {
      j.begin_object().key("error").value(e.what()).end_object();
    }
  };
  run("matmul", [&] { return npu::probe_matmul(device).to_json(); });
  run("dma", [&] { return npu::probe_dma(device).to_json(); });
  run("stream", [&] { return npu::probe_stream(device, 4, uint64_t(64) << 20).to_json(); });
  j.end_object();
  std::string log_error;
  const std::vector<std::string> log = kernel_log_tail(80, &log_error);
  j.key("kernel_log");
  if (log_error.empty()) {
    j.begin_array();
    for (const std::string& line : log) j.value(line);
    j.end_array();
  } else {
    j.null();
    j.key("kernel_log_error").value(log_error);
  }
  j.end_object();
  return j.str();
}

int probe_report(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = {
      {{"--device"}, true, "npu | sim | auto (default: npu when present, else sim)"},
      {{"-o", "--output"}, true, "the report file (default ork-probe-report.json)"},
      {{"-h", "--help"}, false, "this help"},
  };
  specs.insert(specs.end(), kSimOptions.begin(), kSimOptions.end());
  const Args args("probe report", specs, argv);
  if (args.has("--help")) {
    std::printf("usage: ork probe report [--device npu|sim|auto] [-o FILE]\n%s", format_options(specs).c_str());
    return 0;
  }
  npu::DeviceOptions dopts = device_options(args, "auto");
  if (dopts.kind != "npu" && dopts.kind != "sim" && dopts.kind != "auto") {
    throw UsageError{"--device: '" + dopts.kind + "' is not one of npu, sim, auto"};
  }
  const std::string path = args.get_or("--output", "ork-probe-report.json");
  const auto device = npu::Device::open(dopts);
  const std::string report = probe_report_json(*device) + "\n";
  write_file_atomic(path, report);
  std::printf("wrote %s: attach it to a bug report\n", path.c_str());
  return 0;
}

}  // namespace ork::cli
