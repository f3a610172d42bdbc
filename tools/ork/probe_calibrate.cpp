#include "probe_calibrate.h"

#include <chrono>
#include <cstdio>

#include "args.h"
#include "commands.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json.h"
#include "core/thread_pool.h"
#include "device_flags.h"
#include "npu/probe_calibrate.h"
#include "runtime/cpu_calibrate.h"

namespace ork::cli {

namespace {

const std::vector<OptionSpec> kCalibrateOptions = {
    {{"--device"}, true, "npu | sim | auto (default: npu when present, else sim)"},
    {{"--output"}, true, "the profile to write (default ork-board-profile.json)"},
    {{"--name"}, true, "the profile's name (default: calibrated-<device>)"},
    {{"--repeats"}, true, "timed runs per job on the board, median taken (default 9)"},
    {{"--threads"}, true, "CPU threads for the CPU measurements (default: all cores)"},
    {{"--measure-cpu"}, false, "sim: measure this machine's CPU too (on a board it always is)"},
    {{"--json"}, false, "print the measurements as JSON"},
    {{"-h", "--help"}, false, "this help"},
};

const char* kUsage =
    "usage: ork probe calibrate [--device npu|sim] [--output FILE] [--name NAME] [--repeats N] [--json]\n"
    "  Measures the board cost model's parameters (docs/board-model.md): NPU submit and per-task cost,\n"
    "  DDR bandwidth, MAC efficiency, domain switch; the CPU's read bandwidth, int8 rate and call cost\n"
    "  with ork's own kernel, its host-op cost (rmsnorm) and f32 rate (attention); the DDR bandwidth of\n"
    "  the NPU and the CPU reading at once. Writes them as a board profile for --board-profile.\n"
    "  On --device sim the NPU's clock is the model itself: the probe recovers the profile the simulator\n"
    "  runs with (a self-check of the method, not a measurement of any board), and the CPU fields are\n"
    "  kept from that profile unless --measure-cpu.\n\n";

}  // namespace

int probe_calibrate(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = kCalibrateOptions;
  specs.insert(specs.end(), kSimOptions.begin(), kSimOptions.end());
  const Args args("probe calibrate", specs, argv);
  if (args.has("--help")) {
    std::printf("%s%s", kUsage, format_options(specs).c_str());
    return 0;
  }
  npu::DeviceOptions dopts = device_options(args, "auto");
  if (dopts.kind != "npu" && dopts.kind != "sim" && dopts.kind != "auto") {
    throw UsageError{"--device: '" + dopts.kind + "' is not one of npu, sim, auto"};
  }
  const int repeats = int(args.get_int("--repeats", 9, 1, 1000));
  const std::string path = args.get_or("--output", "ork-board-profile.json");
  dopts.sim_timing_only = true;  // the simulator's outputs are not used: only its modeled clock
  const auto device = npu::Device::open(dopts);
  const bool sim = device->sim_kernel() != nullptr;
  const npu::sim::BoardProfile base = npu::sim::load_board_profile(dopts.board_profile);
  npu::NpuCalibration cal = npu::calibrate_npu(*device, base, repeats);
  cal.profile.name = args.get_or("--name", sim ? "calibrated-sim" : "calibrated-npu");
  std::vector<npu::CalibrationStep> cpu_steps;
  if (!sim || args.has("--measure-cpu")) {
    ThreadPool pool(int(args.get_int("--threads", 0, 1, 1024)));
    cpu_steps = runtime::calibrate_cpu(pool, cal.profile, repeats);
    for (npu::CalibrationStep& s : runtime::calibrate_ddr_total(*device, pool, cal.profile, std::chrono::milliseconds(500))) {
      cpu_steps.push_back(std::move(s));
    }
  } else {
    cal.notes.push_back("cpu_*, host_op_us: kept from the base profile (--measure-cpu measures this machine's CPU)");
  }
  if (sim) {
    cal.notes.push_back("ddr_total_gbps: kept from the base profile; on a board it is measured with an NPU job and a "
                        "CPU matmul reading at once for 500 ms (the simulator's modeled clock has no second reader)");
  }
  write_file_atomic(path, npu::sim::board_profile_json(cal.profile) + "\n");

  if (args.has("--json")) {
    JsonWriter j;
    j.begin_object();
    j.key("device").value(device->caps().name);
    j.key("npu_clock").value(cal.clock);
    j.key("self_check").value(sim);
    j.key("base_profile").value(base.name);
    j.key("output").value(path);
    j.key("profile").raw(npu::sim::board_profile_json(cal.profile));
    j.key("steps").begin_array();
    for (const auto* steps : {&cal.steps, &cpu_steps}) {
      for (const npu::CalibrationStep& s : *steps) {
        j.begin_object().key("field").value(s.what).key("value").value(s.value).key("how").value(s.how).end_object();
      }
    }
    j.end_array();
    j.key("notes").begin_array();
    for (const std::string& n : cal.notes) j.value(n);
    j.end_array();
    j.end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("device: %s; NPU clock: %s%s\n", device->caps().name.c_str(), cal.clock.c_str(),
              sim ? " (the simulator's model: a self-check of the method, not a board measurement)" : "");
  for (const auto* steps : {&cal.steps, &cpu_steps}) {
    for (const npu::CalibrationStep& s : *steps) {
      std::printf("  %-18s %12.4f   %s\n", s.what.c_str(), s.value, s.how.c_str());
    }
  }
  for (const std::string& n : cal.notes) std::printf("  note: %s\n", n.c_str());
  std::printf("wrote %s (profile \"%s\"): use it with --board-profile %s\n", path.c_str(), cal.profile.name.c_str(),
              path.c_str());
  return 0;
}

}  // namespace ork::cli
