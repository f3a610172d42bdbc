#include "runtime/engine.h"

#include "core/error.h"
#include "core/json.h"
#include "core/log.h"
#include "npu/drm_kernel.h"
#include "runtime/cpu_int8_matmul.h"
#include "runtime/npu_matmul.h"

namespace ork::runtime {

Engine::Engine(const EngineOptions& options) : options_(options) {
  ORK_CHECK(options.threads >= 0 && options.threads <= 1024, "threads: ", options.threads,
            " is out of range [0, 1024]");
  std::string device = options.device;
  ORK_CHECK(device == "cpu" || device == "npu" || device == "sim" || device == "auto", "device '",
            device, "' is not one of cpu, npu, sim, auto");
  if (device == "auto") device = npu::find_rknpu_node().path ? "npu" : "cpu";
  options_.device = device;

  model_ = model::Model::load(options.model_path);
  pool_ = std::make_unique<ThreadPool>(options.threads);
  if (device == "cpu") {
    if (options.cpu_int8) {
      backend_ = std::make_unique<CpuInt8Matmul>(*pool_, model_->weights().linears().size());
    } else {
      backend_ = std::make_unique<model::CpuMatmul>(
      *pool_, options.exact ? ops::MatmulMode::kExact : ops::MatmulMode::kFast);
    }
    return;
  }

  npu::DeviceOptions dopts = options.npu;
  dopts.kind = device;
  device_ = npu::Device::open(dopts);
  weights::StoreOptions sopts;
  sopts.persist_path = options.persist_path;
  store_ = std::make_unique<weights::Store>(*model_, sopts);
  weights::PlanOptions popts;
  popts.residency = options.residency;
  popts.budget_bytes = options.wcache_budget_bytes;
  popts.m_max = options.m_max;
  plan_ = std::make_unique<weights::Plan>(make_plan(model_->weights(), device_->caps(), popts));
  log::debug("weights: ", plan_->reason, ", ", plan_->weight_bytes(), " packed bytes");
  cache_ = std::make_unique<weights::Cache>(*device_, *store_, *plan_);
  if (plan_->mode == weights::Residency::kStream) {
    prefetcher_ = std::make_unique<weights::Prefetcher>(*cache_, plan_->prefetch_slots);
  }
  auto npu_backend = std::make_unique<NpuMatmul>(*device_, *cache_, prefetcher_.get());
  if (plan_->mode == weights::Residency::kResident) cache_->load_all();
  cache_->mark_warm();
  backend_ = std::move(npu_backend);
}

Engine::~Engine() {
  prefetcher_.reset();  // stop loading before the cache and device go
  backend_.reset();
}

ResidencyStats Engine::residency_stats() const {
  ResidencyStats r;
  if (!plan_) {
    r.mode = "none";
    return r;
  }
  const weights::CacheStats c = cache_->stats();
  const weights::StoreStats s = store_->stats();
  r.mode = weights::residency_name(plan_->mode);
  r.domains_used = plan_->domains_used;
  r.per_domain_bytes = plan_->domain_bytes;
  if (plan_->mode == weights::Residency::kStream) r.per_domain_bytes = {c.peak_resident_bytes};
  r.resident_bytes = c.resident_bytes;
  r.evictions = c.evictions;
  r.iova_wall_hits = c.iova_wall_hits;
  r.loads = c.loads;
  r.bytes_streamed = c.bytes_loaded_after_warm;
  r.domain_switches = device_->counters().domain_switches;
  r.stall_ms = c.stall_ms;
  r.load_ms = c.load_ms;
  r.prefetch_hidden_fraction = c.load_ms > 0 ? std::max(0.0, 1.0 - c.stall_ms / c.load_ms) : 0.0;
  r.loaded = s.loaded;
  r.packed = s.packed;
  return r;
}

std::string ResidencyStats::to_json() const {
  JsonWriter j;
  j.begin_object();
  j.key("mode").value(mode);
  j.key("domains_used").value(uint64_t(domains_used));
  j.key("per_domain_bytes").begin_array();
  for (uint64_t b : per_domain_bytes) j.value(b);
  j.end_array();
  j.key("resident_bytes").value(resident_bytes);
  j.key("evictions").value(evictions);
  j.key("iova_wall_hits").value(iova_wall_hits);
  j.key("loads").value(loads);
  j.key("bytes_streamed").value(bytes_streamed);
  j.key("domain_switches").value(domain_switches);
  j.key("stall_ms").value(stall_ms);
  j.key("load_ms").value(load_ms);
  j.key("prefetch_hidden_fraction").value(prefetch_hidden_fraction);
  j.key("loaded").value(loaded);
  j.key("packed").value(packed);
  j.end_object();
  return j.str();
}

}  // namespace ork::runtime
