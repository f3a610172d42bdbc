#include "device_flags.h"

#include <fstream>
#include <sstream>

#include "commands.h"
#include "core/env.h"
#include "core/error.h"
#include "runtime/cpu_int4_matmul.h"

namespace ork::cli {

const std::vector<OptionSpec> kSimOptions = {
    {{"--sim-window-mb"}, true, "simulated IOVA window per domain in MiB (ORK_SIM_WINDOW_MB, default 4096)"},
    {{"--sim-domains"}, true, "simulated IOMMU domains (ORK_SIM_DOMAINS, default 16)"},
    {{"--sim-cores"}, true, "simulated NPU cores (ORK_SIM_CORES, default 3)"},
    {{"--board-profile"}, true, "JSON parameters of the board cost model (ORK_BOARD_PROFILE; docs/board-model.md)"},
    {{"--schedule"}, true, "npu/sim: where matmuls run: npu (default), cpu, or auto (the board model's "
                           "faster one per shape; docs/board-model.md)"},
    {{"--npu-wtype"}, true, "npu/sim: device weights i8 (default), i4 (W4A8, a scale per row: half the bytes), "
                            "i4a4 (i4 weights and int4 activations: less accurate, faster prefill), or "
                            "auto (i4 for 4/5-bit GGUF weights; docs/quant.md)"},
    {{"--sim-timing-only"}, false, "simulated NPU: model the time, skip the arithmetic (outputs are meaningless; "
                                   "ORK_SIM_TIMING_ONLY=1)"},
};

const std::vector<OptionSpec> kKvOptions = {
    {{"--kv-type"}, true, "KV cache type: f32 | f16 | q8_0 (default f16 as llama.cpp; f32 with --exact)"},
    {{"--swa-ring"}, false, "sliding-window layers keep a ring of window + m_max - 1 (127) KV rows, not the whole context "
                            "(the default; rollback only within the ring)"},
    {{"--no-swa-ring"}, false, "sliding-window layers keep the whole context's KV rows (as llama.cpp's --swa-full)"},
};

npu::DeviceOptions device_options(const Args& args, const std::string& def) {
  npu::DeviceOptions o = npu::DeviceOptions::from_env();
  o.kind = args.get_or("--device", def);
  o.sim_window_bytes =
      uint64_t(args.get_int("--sim-window-mb", int64_t(o.sim_window_bytes >> 20), 1, 4096)) << 20;
  o.sim_domains = uint32_t(args.get_int("--sim-domains", o.sim_domains, 1, 16));
  o.sim_cores = uint32_t(args.get_int("--sim-cores", o.sim_cores, 1, 3));
  o.board_profile = args.get_or("--board-profile", o.board_profile);
  o.sim_timing_only = o.sim_timing_only || args.has("--sim-timing-only");
  return o;
}

runtime::EngineOptions engine_options(const Args& args, const std::string& device_def) {
  runtime::EngineOptions eo;
  eo.model_path = args.get_or("--model", default_model_path());
  eo.npu = device_options(args, device_def);
  eo.device = eo.npu.kind;
  eo.threads = int(args.get_int("--threads", 0, 1, 1024));
  eo.pin_threads = args.has("--pin");
  eo.cpu_int8 = args.has("--cpu-int8");
  eo.cpu_int4 = args.get_or("--cpu-int4", "");
  if (!eo.cpu_int4.empty()) {
    if (eo.cpu_int8) throw UsageError{"--cpu-int4 and --cpu-int8 exclude each other"};
    try {
      (void)runtime::Int4Scheme::parse(eo.cpu_int4);
    } catch (const Error& e) {
      throw UsageError{std::string("--cpu-int4: ") + e.what()};
    }
  }
  eo.exact = args.has("--exact");
  try {
    eo.residency = weights::parse_residency(args.get_or("--residency", "auto"));
  } catch (const Error& e) {
    throw UsageError{std::string("--residency: ") + e.what()};
  }
  eo.wcache_budget_bytes = uint64_t(args.get_int("--wcache-budget-mb",
                                                 env_int("ORK_WCACHE_BUDGET_MB", 3072, 1, 1 << 20),
                                                 1, 1 << 20)) << 20;
  if (args.has("--wcache-host-mb") || env_string("ORK_WCACHE_HOST_MB")) {
    eo.wcache_host_bytes = uint64_t(args.get_int("--wcache-host-mb", env_int("ORK_WCACHE_HOST_MB", 0, 0, 1 << 24),
                                                 0, 1 << 24)) << 20;
  }
  try {
    eo.expert_prefetch = weights::parse_expert_prefetch(args.get_or("--expert-prefetch", "predict"));
  } catch (const Error& e) {
    throw UsageError{std::string("--expert-prefetch: ") + e.what()};
  }
  eo.persist_path = args.get_or("--persist", env_string("ORK_PERSIST").value_or(""));
  eo.evict_src = args.has("--evict-src") || env_flag("ORK_EVICT_SRC", false);
  eo.tokenizer_pre = args.get_or("--tokenizer-pre", "");
  try {
    eo.schedule = runtime::parse_schedule(args.get_or("--schedule", "npu"));
  } catch (const Error& e) {
    throw UsageError{std::string("--schedule: ") + e.what()};
  }
  ORK_CHECK(!(args.has("--swa-ring") && args.has("--no-swa-ring")), "--swa-ring and --no-swa-ring contradict each other");
  eo.swa_ring = !args.has("--no-swa-ring");
  try {
    eo.npu_wtype = runtime::parse_npu_wtype(args.get_or("--npu-wtype", "i8"));
  } catch (const Error& e) {
    throw UsageError{std::string("--npu-wtype: ") + e.what()};
  }
  if (eo.npu_wtype != runtime::NpuWtype::kI8 && eo.device == "cpu" && args.has("--npu-wtype")) {
    throw UsageError{std::string("--npu-wtype needs --device npu or sim (on the cpu: --cpu-int4 ") +
                     (runtime::int4_activations(eo.npu_wtype) ? "w4a4)" : "w4a8)")};
  }
  if (args.has("--kv-type")) {
    try {
      eo.kv_type = model::parse_kv_type(args.get_or("--kv-type", ""));
    } catch (const Error& e) {
      throw UsageError{std::string("--kv-type: ") + e.what()};
    }
  }
  return eo;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ORK_CHECK(in.good(), path, ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  ORK_CHECK(!in.bad(), path, ": read error");
  return s.str();
}

}  // namespace ork::cli
