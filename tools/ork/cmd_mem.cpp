// ork mem — what a model takes in memory: the plan before loading (resident in how many domains or
// streamed, RAM and IOVA window at a context length), then what loading it took, from ork's own
// accounting and from the device's counters.
#include <cstdio>
#include <string>
#include <vector>

#include "mem_experts.h"
#include "args.h"
#include "commands.h"
#include "device_flags.h"
#include "mem_draft.h"
#include "core/env.h"
#include "core/error.h"
#include "core/json.h"
#include "core/log.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kMemOptions = {
    {{"-m", "--model"}, true, "GGUF model file (default: the embedded default model)"},
    {{"-c", "--ctx"}, true, "context size in tokens (default: the model's trained length, bounded by half the available memory)"},
    {{"--device"}, true, "cpu | npu | sim | auto (default: npu when present, else cpu)"},
    {{"--residency"}, true, "npu/sim weights: auto | resident | stream (default auto)"},
    {{"--wcache-budget-mb"}, true, "streaming budget of device weights in MiB (ORK_WCACHE_BUDGET_MB, 3072)"},
    {{"--wcache-host-mb"}, true,
     "streamed weights: host memory in MiB for packed weights kept between loads (ORK_WCACHE_HOST_MB; "
     "default: all of them, at most half of MemAvailable)"},
    {{"--plan-only"}, false, "print the plan and load nothing"},
    {{"--json"}, false, "print one JSON object"},
    {{"-v", "--verbose"}, false, "debug messages on stderr (ORK_VERBOSE=1)"},
    {{"-h", "--help"}, false, "this help"},
};

void put_array(JsonWriter& j, const char* key, const std::vector<uint64_t>& v) {
  j.key(key).begin_array();
  for (uint64_t x : v) j.value(x);
  j.end_array();
}

std::string mib(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", double(b) / (1 << 20));
  return buf;
}

}  // namespace

int cmd_mem(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = kMemOptions;
  specs.insert(specs.end(), kSimOptions.begin(), kSimOptions.end());
  specs.insert(specs.end(), kKvOptions.begin(), kKvOptions.end());
  specs.insert(specs.end(), kMemDraftOptions.begin(), kMemDraftOptions.end());
  const Args args("mem", specs, argv);
  if (args.has("--help")) {
    std::printf("usage: ork mem [-m MODEL] [--ctx N] [--device D] [--json] [options]\n\n%s",
                format_options(specs).c_str());
    return 0;
  }
  if (args.has("--verbose")) log::set_verbose(true);
  runtime::EngineOptions eo = engine_options(args, "auto");
  const int64_t n_ctx = args.get_int("--ctx", 0, 1, int64_t(1) << 24);
  const bool json = args.has("--json");
  if (args.has("--draft")) return mem_with_draft(args, eo, n_ctx);

  const runtime::MemoryPlan plan = runtime::plan_memory(eo, n_ctx);
  JsonWriter j;
  j.begin_object();
  if (json) {
    j.key("plan").begin_object();
    j.key("device").value(plan.device);
    j.key("mode").value(plan.mode);
    j.key("reason").value(plan.reason);
    j.key("n_ctx").value(uint64_t(plan.n_ctx));
    j.key("domains_used").value(uint64_t(plan.domains_used));
    put_array(j, "weight_device_bytes", plan.weight_device_bytes);
    put_array(j, "scratch_device_bytes", plan.scratch_device_bytes);
    put_array(j, "scratch_caller_bytes", plan.scratch_caller_bytes);
    put_array(j, "window_bytes", plan.window_bytes);
    j.key("stream_budget_bytes").value(plan.stream_budget_bytes);
    j.key("dma_bytes").value(plan.dma_bytes);
    j.key("model_file_bytes").value(plan.model_file_bytes);
    j.key("kv_type").value(plan.kv_type);
    j.key("kv_cache_bytes").value(plan.kv_cache_bytes);
    j.key("kv_staging_bytes").value(plan.kv_staging_bytes);
    j.key("host_scratch_bytes").value(plan.host_scratch_bytes);
    j.key("cpu_copy_bytes").value(plan.cpu_copy_bytes);
    j.key("cpu_copy_weights").value(uint64_t(plan.cpu_copy_weights));
    j.key("cpu_copy_all_bytes").value(plan.cpu_copy_all_bytes);
    j.key("host_packed_bytes").value(plan.host_packed_bytes);
    j.key("ram_bytes").value(plan.ram_bytes);
    j.end_object();
  } else {
    std::printf("plan (before loading): device %s, %s — %s\n", plan.device.c_str(), plan.mode.c_str(),
                plan.reason.c_str());
    std::printf("  %-8s %16s %16s %16s\n", "domain", "weights", "scratch", "IOVA window");
    for (uint32_t d = 0; d < plan.domains_used; ++d) {
      std::printf("  %-8u %16s %16s %16s\n", d, mib(plan.weight_device_bytes[d]).c_str(),
                  mib(plan.scratch_device_bytes[d]).c_str(), mib(plan.window_bytes[d]).c_str());
    }
    if (plan.stream_budget_bytes != 0) std::printf("  streaming budget      %s\n", mib(plan.stream_budget_bytes).c_str());
    std::printf("  device (DMA) memory   %s\n", mib(plan.dma_bytes).c_str());
    if (!plan.scratch_caller_bytes.empty()) {  // what caller internal memory must hold, per domain
      std::printf("  internal memory from the caller (per domain, bytes):");
      for (uint64_t b : plan.scratch_caller_bytes) std::printf(" %llu", static_cast<unsigned long long>(b));
      std::printf("\n");
    }
    std::printf("  model file (mapped)   %s\n", mib(plan.model_file_bytes).c_str());
    std::printf("  KV cache (%lld tok, %s)   %s\n", static_cast<long long>(plan.n_ctx), plan.kv_type.c_str(),
                mib(plan.kv_cache_bytes).c_str());
    std::printf("  host scratch          %s\n", mib(plan.host_scratch_bytes).c_str());
    if (plan.cpu_copy_all_bytes != 0) {
      std::printf("  schedule's CPU copies %s (%u weights; other prompt lengths may copy up to %s)\n",
                  mib(plan.cpu_copy_bytes).c_str(), plan.cpu_copy_weights, mib(plan.cpu_copy_all_bytes).c_str());
    }
    if (plan.host_packed_bytes != 0) {
      std::printf("  packed weights (host) %s (streamed weights kept packed between loads)\n",
                  mib(plan.host_packed_bytes).c_str());
    }
    std::printf("  RAM to plan for       %s\n", mib(plan.ram_bytes).c_str());
  }
  if (args.has("--plan-only")) {
    if (json) {
      j.end_object();
      std::printf("%s\n", j.str().c_str());
    }
    return 0;
  }

  runtime::Engine engine(eo);
  runtime::Context ctx(engine, plan.n_ctx);
  ctx.eval({0});  // one token: the forward scratch exists
  engine.wait_prefetch_idle();  // the figures below are read while nothing loads
  const runtime::EngineMemory em = engine.memory();
  const runtime::Context::Memory cm = ctx.memory();
  npu::Counters dc{};
  uint32_t domains = 0;
  if (const npu::Device* dev = engine.device()) {
    dc = dev->counters();
    domains = dev->caps().domains;
  }
  std::vector<uint64_t> dev_bytes, dev_peak;
  for (uint32_t d = 0; d < domains; ++d) {
    dev_bytes.push_back(dc.mapped_bytes[d]);
    dev_peak.push_back(dc.peak_mapped_bytes[d]);
  }
  if (json) {
    j.key("loaded").begin_object();
    j.key("weight_bytes").value(em.weight_bytes);
    j.key("scratch_bytes").value(em.scratch_bytes);
    put_array(j, "weight_device_bytes", em.weight_device_bytes);
    put_array(j, "scratch_device_bytes", em.scratch_device_bytes);
    j.key("kv_cache_bytes").value(cm.kv_bytes);
    j.key("host_scratch_bytes").value(cm.scratch_bytes);
    j.key("io_bytes").value(cm.logits_bytes);
    j.key("cpu_copy_bytes").value(em.cpu_weight_bytes);  // made by the one decode step so far
    j.key("sram_bytes").value(uint64_t(0));
    j.end_object();
    j.key("device").begin_object();
    j.key("buffers").value(dc.creates - dc.destroys);
    j.key("total_dma_bytes").value(dc.total_mapped_bytes);
    j.key("peak_total_dma_bytes").value(dc.peak_total_mapped_bytes);
    put_array(j, "mapped_bytes", dev_bytes);
    put_array(j, "peak_mapped_bytes", dev_peak);
    j.end_object();
    report_mem_experts(engine, ctx, 1, &j);
    j.end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("\nloaded: %s\n", engine.device_name());
  std::printf("  %-8s %16s %16s %16s %16s\n", "domain", "weights", "scratch", "device total", "device peak");
  for (uint32_t d = 0; d < domains; ++d) {
    if (dev_peak[d] == 0) continue;
    std::printf("  %-8u %16s %16s %16s %16s\n", d, mib(em.weight_device_bytes[d]).c_str(),
                mib(em.scratch_device_bytes[d]).c_str(), mib(dev_bytes[d]).c_str(), mib(dev_peak[d]).c_str());
  }
  std::printf("  weights               %s\n", mib(em.weight_bytes).c_str());
  std::printf("  internal: scratch     %s (device), %s (host)\n", mib(em.scratch_bytes).c_str(),
              mib(cm.scratch_bytes).c_str());
  std::printf("  internal: KV cache    %s\n", mib(cm.kv_bytes).c_str());
  std::printf("  I/O (logits)          %s\n", mib(cm.logits_bytes).c_str());
  if (em.cpu_weight_bytes != 0) {
    std::printf("  schedule's CPU copies %s (after one decode step)\n", mib(em.cpu_weight_bytes).c_str());
  }
  std::printf("  device total (peak)   %s (%s)\n", mib(dc.total_mapped_bytes).c_str(),
              mib(dc.peak_total_mapped_bytes).c_str());
  std::printf("  SRAM                  0 (not used)\n");
  report_mem_experts(engine, ctx, 1, nullptr);
  return 0;
}

}  // namespace ork::cli
