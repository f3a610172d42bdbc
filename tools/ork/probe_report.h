// ork probe report — the one file a board owner attaches to a bug report: the device (driver
// version, node, cores, domains), the result of every probe (dma, stream, matmul), and the tail of
// the kernel log when this user may read it.
#pragma once

#include <string>
#include <vector>

#include "npu/device.h"

namespace ork::cli {

// Runs the probes on `device` and returns the report as JSON:
// {"ork_version","time_utc","device":{"name","simulated","driver_version","cores","domains",
//  "window_bytes"},"probes":{"dma":{…},"stream":{…},"matmul":{…}},"kernel_log":[…lines…] | null,
//  "kernel_log_error":"…"} (probe_dma.h, probe_stream.h, probe_matmul.h describe each probe's object).
std::string probe_report_json(npu::Device& device);

// The last `lines` lines of the kernel log (klogctl SYSLOG_ACTION_READ_ALL), or an empty vector and
// `error` set ("Operation not permitted: run as root or set kernel.dmesg_restrict=0").
std::vector<std::string> kernel_log_tail(size_t lines, std::string* error);

// argv: the arguments after "probe report". Writes the report to -o FILE (default
// ork-probe-report.json), atomically (a temporary file renamed), and prints its path.
int probe_report(const std::vector<std::string>& argv);

}  // namespace ork::cli
