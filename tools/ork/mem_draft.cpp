#include "mem_draft.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "core/json.h"
#include "runtime/context.h"
#include "speculative_flags.h"

namespace ork::cli {

const std::vector<OptionSpec> kMemDraftOptions = {
    {{"--draft"}, true, "a speculative draft (GGUF): planned first, resident, the model beside it"},
};

namespace {

std::string mib(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", double(b) / (1 << 20));
  return buf;
}

uint64_t at(const std::vector<uint64_t>& v, size_t d) { return d < v.size() ? v[d] : 0; }

void put_array(JsonWriter& j, const char* key, const std::vector<uint64_t>& v) {
  j.key(key).begin_array();
  for (uint64_t x : v) j.value(x);
  j.end_array();
}

void put_plan(JsonWriter& j, const char* key, const runtime::MemoryPlan& p) {
  j.key(key).begin_object();
  j.key("device").value(p.device);
  j.key("mode").value(p.mode);
  j.key("reason").value(p.reason);
  j.key("domains_used").value(uint64_t(p.domains_used));
  put_array(j, "weight_device_bytes", p.weight_device_bytes);
  put_array(j, "scratch_device_bytes", p.scratch_device_bytes);
  put_array(j, "window_bytes", p.window_bytes);
  put_array(j, "window_taken_bytes", p.window_taken_bytes);
  put_array(j, "window_joint_bytes", p.window_joint_bytes);
  j.key("stream_budget_bytes").value(p.stream_budget_bytes);
  j.key("dma_bytes").value(p.dma_bytes);
  j.key("kv_cache_bytes").value(p.kv_cache_bytes);
  j.key("n_ctx").value(uint64_t(p.n_ctx));
  j.end_object();
}

}  // namespace

int mem_with_draft(const Args& args, runtime::EngineOptions target, int64_t n_ctx) {
  const bool json = args.has("--json");
  const std::unique_ptr<runtime::Engine> draft = load_draft(args, target);
  if (draft->device() == nullptr || target.share_scratch_with == nullptr) {
    throw Error("ork mem --draft: the target and its draft must be on one npu or sim device (--device " +
                runtime::resolve_device(target) + ")");
  }
  runtime::EngineOptions draft_plan_options = draft->options();
  draft_plan_options.share_scratch_with = nullptr;
  // The draft's plan on a fresh device (what loading it took), and the target's beside the loaded draft.
  const runtime::MemoryPlan dp = runtime::plan_memory(draft_plan_options, n_ctx);
  const runtime::MemoryPlan tp = runtime::plan_memory(target, n_ctx);
  const uint32_t domains = std::max(dp.domains_used, tp.domains_used);
  const uint64_t window = tp.window_capacity_bytes;

  JsonWriter j;
  j.begin_object();
  if (json) {
    put_plan(j, "draft_plan", dp);
    put_plan(j, "plan", tp);
    j.key("window_capacity_bytes").value(window);
  } else {
    std::printf("plan, draft (first): device %s, %s — %s\n", dp.device.c_str(), dp.mode.c_str(), dp.reason.c_str());
    std::printf("plan, target (beside it): %s — %s\n", tp.mode.c_str(), tp.reason.c_str());
    std::printf("  %-8s %16s %16s %16s %16s\n", "domain", "draft weights", "target weights", "shared scratch",
                "IOVA of both");
    for (uint32_t d = 0; d < domains; ++d) {
      std::printf("  %-8u %16s %16s %16s %16s\n", d, mib(at(dp.weight_device_bytes, d)).c_str(),
                  (d == 0 && tp.stream_budget_bytes != 0 ? "<= " + mib(tp.stream_budget_bytes)
                                                          : mib(at(tp.weight_device_bytes, d))).c_str(),
                  mib(std::max(at(dp.scratch_device_bytes, d), at(tp.scratch_device_bytes, d))).c_str(),
                  mib(at(tp.window_joint_bytes, d) > 0 ? at(tp.window_joint_bytes, d) : at(dp.window_bytes, d)).c_str());
    }
    std::printf("  IOVA window per domain  %s\n", mib(window).c_str());
    if (tp.stream_budget_bytes != 0) std::printf("  target streaming budget %s\n", mib(tp.stream_budget_bytes).c_str());
    std::printf("  device (DMA) memory     %s draft + %s target\n", mib(dp.dma_bytes).c_str(), mib(tp.dma_bytes).c_str());
  }
  if (args.has("--plan-only")) {
    if (json) {
      j.end_object();
      std::printf("%s\n", j.str().c_str());
    }
    return 0;
  }

  runtime::Engine engine(target);
  runtime::Context tctx(engine, tp.n_ctx), dctx(*draft, tp.n_ctx);
  tctx.eval({0});  // one token each: the forward scratch exists
  dctx.eval({0});
  engine.wait_prefetch_idle();  // the figures below are read while nothing loads
  const runtime::EngineMemory dm = draft->memory(), tm = engine.memory();
  const npu::Counters dc = engine.device()->counters();
  std::vector<uint64_t> mapped, peak;
  for (uint32_t d = 0; d < engine.device()->caps().domains; ++d) {
    mapped.push_back(dc.mapped_bytes[d]);
    peak.push_back(dc.peak_mapped_bytes[d]);
  }
  if (json) {
    j.key("loaded").begin_object();
    put_array(j, "draft_weight_device_bytes", dm.weight_device_bytes);
    put_array(j, "target_weight_device_bytes", tm.weight_device_bytes);
    put_array(j, "scratch_device_bytes", tm.scratch_device_bytes);  // the one both use
    j.key("scratch_shared").value(tm.scratch_shared && dm.scratch_shared);
    j.key("draft_kv_cache_bytes").value(dctx.memory().kv_bytes);
    j.key("target_kv_cache_bytes").value(tctx.memory().kv_bytes);
    j.end_object();
    j.key("device").begin_object();
    j.key("total_dma_bytes").value(dc.total_mapped_bytes);
    j.key("peak_total_dma_bytes").value(dc.peak_total_mapped_bytes);
    put_array(j, "mapped_bytes", mapped);
    put_array(j, "peak_mapped_bytes", peak);
    j.end_object();
    j.end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("\nloaded: %s, the scratch %s\n", engine.device_name(),
              tm.scratch_shared ? "shared by both" : "NOT shared");
  std::printf("  %-8s %16s %16s %16s %16s %16s\n", "domain", "draft weights", "target weights", "shared scratch",
              "device total", "device peak");
  for (uint32_t d = 0; d < mapped.size(); ++d) {
    if (peak[d] == 0) continue;
    std::printf("  %-8u %16s %16s %16s %16s %16s\n", d, mib(at(dm.weight_device_bytes, d)).c_str(),
                mib(at(tm.weight_device_bytes, d)).c_str(), mib(at(tm.scratch_device_bytes, d)).c_str(),
                mib(mapped[d]).c_str(), mib(peak[d]).c_str());
  }
  std::printf("  device total (peak)     %s (%s)\n", mib(dc.total_mapped_bytes).c_str(),
              mib(dc.peak_total_mapped_bytes).c_str());
  return 0;
}

}  // namespace ork::cli
