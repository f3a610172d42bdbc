#include "runtime/engine.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <unordered_map>

#include "core/error.h"
#include "core/json.h"
#include "core/log.h"
#include "npu/drm_kernel.h"
#include "ops/attention_blocked.h"
#include "ops/qpanels.h"
#include "runtime/context_size.h"
#include "runtime/swa_ring.h"
#include "runtime/cpu_int4_matmul.h"
#include "runtime/cpu_int8_matmul.h"
#include "runtime/hybrid_matmul.h"
#include "model/forward.h"
#include "runtime/npu_matmul.h"
#include "runtime/planned_cpu_copies.h"
#include "weights/hash64.h"

namespace ork::runtime {

namespace {

constexpr uint64_t kPage = 4096;
uint64_t page_round(uint64_t b) { return (b + kPage - 1) / kPage * kPage; }

// Drops the units of the weights in `drop` from a plan (they run on another engine's copy).
void drop_weights(weights::Plan& p, const std::vector<bool>& drop) {
  std::fill(p.domain_bytes.begin(), p.domain_bytes.end(), 0);
  p.units.clear();
  p.first_unit.clear();
  for (size_t i = 0; i < p.weights.size(); ++i) {
    p.first_unit.push_back(int32_t(p.units.size()));
    if (drop[i]) {
      p.weights[i].slices.clear();
      continue;
    }
    for (size_t s = 0; s < p.weights[i].slices.size(); ++s) p.units.push_back({int32_t(i), int32_t(s)});
    if (p.weights[i].domain < p.domain_bytes.size()) p.domain_bytes[p.weights[i].domain] += p.weights[i].bytes();
  }
}

uint64_t content_hash(const weights::PackedView& v) {
  const uint64_t h = weights::hash64(v.bytes, size_t(weights::packed_bytes(v.n, v.k, v.dtype)),
                                     uint64_t(v.n) * 1000003u + uint64_t(v.k));
  return v.scales != nullptr ? weights::hash64(v.scales, size_t(v.scale_count()) * sizeof(float), h) : h;
}

bool same_content(const weights::PackedView& a, const weights::PackedView& b) {
  if (a.n != b.n || a.k != b.k || a.dtype != b.dtype) return false;
  if ((a.scales == nullptr) != (b.scales == nullptr)) return false;
  if (std::memcmp(a.bytes, b.bytes, size_t(weights::packed_bytes(a.n, a.k, a.dtype))) != 0) return false;
  return a.scales == nullptr || std::memcmp(a.scales, b.scales, size_t(a.scale_count()) * sizeof(float)) == 0;
}

struct SharedWeights {
  uint64_t bytes = 0;
  uint32_t count = 0;
};

// Drops the weights of `shared` (this plan's index first) from the plan; returns what they were.
SharedWeights drop_shared(weights::Plan& p, const std::vector<std::pair<int32_t, int32_t>>& shared) {
  SharedWeights sw;
  std::vector<bool> drop(p.weights.size(), false);
  for (const auto& [mine, theirs] : shared) {
    drop[size_t(mine)] = true;
    sw.bytes += p.weights[size_t(mine)].bytes();
    sw.count++;
  }
  drop_weights(p, drop);
  return sw;
}

// [domain] the matmul scratch an engine's matmuls need: its plan's domains, and the domains of the
// weights that run on `other`'s copies (with their need there). Domains needing nothing are zero.
std::vector<npu::ScratchNeed> scratch_by_domain(const weights::Plan& mine, const weights::Plan* other,
                                                const std::vector<std::pair<int32_t, int32_t>>& shared) {
  std::vector<npu::ScratchNeed> needs;
  for (uint32_t d = 0; d < mine.domains_used && d < mine.scratch.size(); ++d) needs.push_back(mine.scratch[d]);
  if (other == nullptr) return needs;
  for (const auto& [m, theirs] : shared) {
    const uint32_t d = other->weights[size_t(theirs)].domain;
    if (d >= other->scratch.size()) continue;
    if (needs.size() <= d) needs.resize(d + 1);
    needs[d].merge(other->scratch[d]);
  }
  return needs;
}

// The host budget of packed weights kept between loads (EngineOptions::wcache_host_bytes): none for
// a resident plan; auto: every weight's packed bytes, at most half of MemAvailable (the GGUF mapping,
// the KV cache and the scratch need the rest; unreadable MemAvailable: the packed bytes).
// A budget above the packed model is never used, so the result is at most the packed model: what the
// memory plan counts as RAM (MemoryPlan::host_packed_bytes).
uint64_t host_packed_budget(const weights::Plan& plan, uint64_t requested) {
  if (plan.mode != weights::Residency::kStream) return 0;
  uint64_t all = 0;  // what HostPacked holds of each weight: its packed bytes and one scale per row
  for (const weights::WeightPlan& w : plan.weights) all += w.bytes() + uint64_t(w.linear->n) * sizeof(float);
  if (requested != EngineOptions::kAutoHostBudget) return std::min(requested, all);
  const uint64_t avail = available_memory_bytes();
  return avail == 0 ? all : std::min(all, avail / 2);
}

}  // namespace

std::string resolve_device(const EngineOptions& options) {
  std::string device = options.device;
  ORK_CHECK(device == "cpu" || device == "npu" || device == "sim" || device == "auto", "device '",
            device, "' is not one of cpu, npu, sim, auto");
  const Engine* const share_from = options.share_scratch_with != nullptr ? options.share_scratch_with
                                                                          : options.share_weights_with;
  if (share_from != nullptr) {
    ORK_CHECK(share_from->device() != nullptr, "sharing scratch or weights needs a model on the npu or sim device");
    ORK_CHECK(options.share_scratch_with == nullptr || options.share_weights_with == nullptr ||
                  options.share_scratch_with->device() == options.share_weights_with->device(),
              "share_scratch_with and share_weights_with name models on different devices");
    device = share_from->options().device;
  }
  if (device == "auto") device = npu::find_rknpu_node().path ? "npu" : "cpu";
  return device;
}


Engine::Engine(const EngineOptions& options) : options_(options) {
  ORK_CHECK(options.threads >= 0 && options.threads <= 1024, "threads: ", options.threads,
            " is out of range [0, 1024]");
  const std::string device = resolve_device(options);
  Engine* const share_from = options.share_scratch_with != nullptr ? options.share_scratch_with
                                                                    : options.share_weights_with;
  options_.device = device;

  try {
    model_ = model::Model::load(options.model_path, {options.tokenizer_pre});
  } catch (const Error& e) {
    throw LoadError(e.what());
  }
  // The embedding rows are read in place, one token's row a step: mapped now (as llama.cpp maps the
  // whole file, MAP_POPULATE), so a token the model has not seen yet costs no page fault mid-step
  // (≈ 13 µs each on this project's virtual machine: docs/ops.md, "where a decode step goes").
  if (const gguf::TensorInfo* e = model_->weights().token_embd; e != nullptr &&
      !model_->file().mapping().map_pages(e->offset, e->n_bytes)) {
    log::debug("embedding rows: not mapped ahead (", std::strerror(errno), "); they fault in as read");
  }
  pool_ = std::make_unique<ThreadPool>(options.threads, options.pin_threads);
  forward_mutex_ = options.share_scratch_with != nullptr ? options.share_scratch_with->forward_mutex_
                                                         : std::make_shared<std::mutex>();
  if (device == "cpu") {
    if (!options.weight_mem.empty()) {
      throw WeightMemError("weight memory from the caller needs the npu or sim device (cpu weights stay in the mapped file)", 0, 0);
    }
    if (options.cpu_int8) {
      backend_ = std::make_unique<CpuInt8Matmul>(*pool_, model_->weights().linears().size());
    } else if (!options.cpu_int4.empty()) {
      backend_ = std::make_unique<CpuInt4Matmul>(*pool_, model_->weights().linears().size(),
                                                 Int4Scheme::parse(options.cpu_int4));
    } else {
      backend_ = std::make_unique<model::CpuMatmul>(
          *pool_, options.exact ? ops::MatmulMode::kExact : ops::MatmulMode::kFast,
          &model_->weights(), &model_->file());
    }
    return;
  }

  if (share_from != nullptr) {
    device_ = share_from->device_;
  } else {
    npu::DeviceOptions dopts = options.npu;
    dopts.kind = device;
    device_ = npu::Device::open(dopts);
  }
  const npu::Dtype wtype = resolve_npu_wtype(options.npu_wtype, model_->weights());
  weights::StoreOptions sopts;
  sopts.persist_path = options.persist_path;
  sopts.evict_src = options.evict_src;
  sopts.wtype = wtype;
  store_ = std::make_unique<weights::Store>(*model_, sopts, pool_.get());
  weights::PlanOptions popts;
  popts.residency = options.residency;
  popts.budget_bytes = options.wcache_budget_bytes;
  popts.m_max = options.m_max;
  // Beside the model whose scratch it shares: in the window that model leaves (a draft loaded first).
  if (options.share_scratch_with != nullptr && options.share_scratch_with->plan_) {
    popts.taken = weights::window_taken(*options.share_scratch_with->plan_);
  }
  popts.wtype = wtype;
  plan_ = std::make_unique<weights::Plan>(make_plan(model_->weights(), device_->caps(), popts));
  for (uint32_t d = 0; d < plan_->domains_used && d < plan_->scratch.size(); ++d) {
    const npu::ScratchNeed& n = plan_->scratch[d];
    for (uint64_t b : {n.a, n.c, n.regcmd, n.tasks, n.plan_regcmd_bytes(), n.plan_task_bytes()}) {
      scratch_own_need_ += page_round(b);
    }
  }
  // Weights identical to a resident weight of share_weights_with run on that copy.
  Engine* const other = options.share_weights_with;
  const std::vector<std::pair<int32_t, int32_t>> shared =
      other != nullptr ? other->identical_weights(*model_, *store_) : std::vector<std::pair<int32_t, int32_t>>{};
  if (!shared.empty()) {
    const SharedWeights sw = drop_shared(*plan_, shared);
    weight_shared_bytes_ = sw.bytes;
    weights_shared_ = sw.count;
  }
  scratch_needs_ = scratch_by_domain(*plan_, other != nullptr ? other->plan_.get() : nullptr, shared);
  log::debug("weights: ", plan_->reason, ", ", plan_->weight_bytes(), " packed bytes, ", weights_shared_,
             " weights shared");
  cache_ = std::make_unique<weights::Cache>(*device_, *store_, *plan_, host_packed_budget(*plan_, options.wcache_host_bytes));
  if (plan_->mode == weights::Residency::kStream && !plan_->units.empty()) {
    prefetcher_ = std::make_unique<weights::Prefetcher>(*cache_, plan_->prefetch_slots);
  }
  scratch_ = options.share_scratch_with != nullptr ? options.share_scratch_with->scratch_
                                                   : std::make_shared<npu::MatmulScratch>(*device_);
  ORK_CHECK(scratch_ != nullptr, "share_scratch_with: that model has no device scratch");
  if (options.share_scratch_with != nullptr) {
    scratch_shared_ = true;
    options.share_scratch_with->scratch_shared_ = true;
  }
  if (!options.scratch_mem.empty()) import_scratch_mem(options.scratch_mem);
  std::unique_ptr<NpuMatmul> npu_backend;
  {
    // Growing a shared scratch must not race with the other engine's forward pass.
    std::lock_guard lock(*forward_mutex_);
    // A shared scratch in the other model's caller memory cannot grow: say how much it would need.
    for (uint32_t d = 0; d < scratch_needs_.size(); ++d) {
      if (!scratch_->in_caller_memory(d)) continue;
      const npu::ScratchNeed cap = scratch_->capacity(d);
      const npu::ScratchNeed& n = scratch_needs_[d];
      if (n.a > cap.a || n.c > cap.c || n.regcmd > cap.regcmd) {
        npu::ScratchNeed both = cap;
        both.merge(n);
        const uint64_t needed = npu::MatmulScratch::caller_bytes(both);
        throw ScratchMemError(str_cat("share_scratch_with: that model's scratch is caller memory of ",
                                      npu::MatmulScratch::caller_bytes(cap), " bytes in domain ", d, "; ",
                                      needed, " needed for both"), d, needed);
      }
    }
    npu_backend = std::make_unique<NpuMatmul>(*device_, *cache_, prefetcher_.get(), scratch_);
    npu_backend->set_expert_prefetch(options.expert_prefetch);
    npu_backend->set_int4_activations(int4_activations(options.npu_wtype));
    if (device_->sim_kernel() != nullptr) {
      host_meter_ = std::make_unique<HostWorkMeter>(device_->sim_kernel()->options().board,
                                                    host_shape_of(model_->config(), kv_type_of(options),
                                                                  plan_->wtype == npu::Dtype::kI4));
    }
    if (device_->sim_kernel() != nullptr && plan_->mode == weights::Residency::kStream) {
      modeled_loads_ = std::make_unique<weights::ModeledLoads>(
          plan_->prefetch_slots, device_->sim_kernel()->options().board.load_gbps);
      npu_backend->model_loads(modeled_loads_.get(), [this] {
        return device_->sim_kernel()->stats().modeled_ns + (hybrid_ != nullptr ? hybrid_->cpu_modeled_ns() : 0.0) +
               host_meter_->modeled_ns();
      });
    }
    for (const auto& [mine, theirs] : shared) npu_backend->redirect(mine, *other->cache_, theirs);
  }
  if (!options.weight_mem.empty()) import_weight_mem(options.weight_mem);
  if (plan_->mode == weights::Residency::kResident) cache_->load_all(weight_mem_.empty() ? nullptr : &weight_mem_);
  cache_->mark_warm();
  if (options.schedule == Schedule::kNpu) {
    backend_ = std::move(npu_backend);
    return;
  }
  Scheduler scheduler(options.schedule, npu::sim::load_board_profile(options.npu.board_profile),
                      std::max<uint32_t>(1, std::min<uint32_t>(3, device_->caps().cores)), plan_->m_max,
                      plan_->mode == weights::Residency::kResident, plan_->wtype,
                      int4_activations(options.npu_wtype));
  auto hybrid = std::make_unique<HybridMatmul>(std::move(npu_backend), *pool_, model_->weights().linears().size(),
                                               std::move(scheduler), options.npu.sim_timing_only);
  hybrid_ = hybrid.get();
  backend_ = std::move(hybrid);
}

void Engine::import_weight_mem(const std::vector<ExternalMemory>& mem) {
  if (plan_->mode != weights::Residency::kResident) {
    throw WeightMemError(str_cat("weight memory from the caller needs a resident plan; this model streams (",
                                 plan_->reason, ")"), 0, 0);
  }
  const std::vector<uint64_t> need = weights::Cache::arena_bytes(*plan_);
  // One per domain of the plan; with share_weights_with the scratch may use more domains than the
  // weights (those domains hold no weight of this model: their entries are ignored).
  const size_t domains = std::max(need.size(), scratch_needs_.size());
  if (mem.size() != need.size() && mem.size() != domains) {
    throw WeightMemError(str_cat("weight memory from the caller: ", mem.size(), " memories given, the plan uses ",
                                 domains, " domain(s) (one each)"), 0, 0);
  }
  for (uint32_t d = 0; d < need.size(); ++d) {
    if (mem[d].size < need[d]) {
      throw WeightMemError(str_cat("weight memory from the caller: domain ", d, " needs ", need[d], " bytes, ",
                                   mem[d].size, " given"), d, need[d]);
    }
  }
  for (uint32_t d = 0; d < need.size(); ++d) {
    // A domain with nothing to hold (every weight shared) keeps an empty slot. One buffer for a whole
    // domain's weights: a power-of-two aligned IOVA slot of its size would not fit beside the scratch
    // in the window the plan filled, so it is mapped without size alignment (LIMIT_IOVA_ALIGNMENT).
    weight_mem_.push_back(need[d] > 0 ? device_->import_fd(mem[d].fd, mem[d].size, d,
                                                           npu::kDefaultBufferFlags | npu::uapi::kMemIommuLimitIovaAlignment)
                                      : npu::Buffer{});
  }
}

void Engine::import_scratch_mem(const std::vector<ExternalMemory>& mem) {
  if (options_.share_scratch_with != nullptr) {
    throw ScratchMemError("scratch memory from the caller cannot be given with share_scratch_with (the scratch is "
                          "that model's)", 0, 0);
  }
  if (mem.size() != scratch_needs_.size()) {
    throw ScratchMemError(str_cat("scratch memory from the caller: ", mem.size(), " memories given, the plan uses ",
                                  scratch_needs_.size(), " domain(s) (one each)"), 0, 0);
  }
  std::vector<uint64_t> need(mem.size(), 0);
  for (uint32_t d = 0; d < mem.size(); ++d) {
    if (scratch_needs_[d].total() == 0) continue;  // nothing runs in this domain
    need[d] = npu::MatmulScratch::caller_bytes(scratch_needs_[d]);
    if (mem[d].fd < 0) {
      throw ScratchMemError(str_cat("scratch memory from the caller: domain ", d, " needs ", need[d],
                                    " bytes but its fd is ", mem[d].fd), 0, 0);
    }
    if (mem[d].size < need[d]) {
      throw ScratchMemError(str_cat("scratch memory from the caller: domain ", d, " needs ", need[d], " bytes, ",
                                    mem[d].size, " given"), d, need[d]);
    }
  }
  for (uint32_t d = 0; d < mem.size(); ++d) {
    if (need[d] == 0) continue;
    // One buffer for the domain's A, C and register commands, mapped without power-of-two alignment
    // (LIMIT_IOVA_ALIGNMENT) like the weight memory: the plan counted their own slots, not one big one.
    scratch_->place(d, scratch_needs_[d],
                    device_->import_fd(mem[d].fd, mem[d].size, d,
                                       npu::kDefaultBufferFlags | npu::uapi::kMemIommuLimitIovaAlignment));
  }
}

std::vector<std::pair<int32_t, int32_t>> Engine::identical_weights(const model::Model& model,
                                                                   weights::Store& store) const {
  std::vector<std::pair<int32_t, int32_t>> shared;
  if (!plan_ || plan_->mode != weights::Residency::kResident) return shared;
  std::unordered_multimap<uint64_t, int32_t> by_hash;
  const auto& theirs = model_->weights().linears();
  for (size_t j = 0; j < theirs.size(); ++j) {
    const weights::Packed pk = store_->get(*theirs[j]);
    by_hash.emplace(content_hash(pk.view), int32_t(j));
  }
  const auto& mine = model.weights().linears();
  for (size_t i = 0; i < mine.size(); ++i) {
    const weights::Packed pk = store.get(*mine[i]);
    const auto range = by_hash.equal_range(content_hash(pk.view));
    for (auto it = range.first; it != range.second; ++it) {
      const weights::Packed po = store_->get(*theirs[size_t(it->second)]);
      if (same_content(pk.view, po.view)) {
        shared.emplace_back(int32_t(i), it->second);
        break;
      }
    }
  }
  return shared;
}

Engine::~Engine() {
  prefetcher_.reset();  // stop loading before the cache and device go
  backend_.reset();
}

model::KvType kv_type_of(const EngineOptions& o) {
  if (o.kv_type) return *o.kv_type;
  return o.exact ? model::KvType::kF32 : model::KvType::kF16;
}

MemoryPlan plan_memory(const EngineOptions& options, int64_t n_ctx) {
  const std::string device = resolve_device(options);
  Engine* const share_from = options.share_scratch_with != nullptr ? options.share_scratch_with
                                                                    : options.share_weights_with;
  ORK_CHECK(n_ctx >= 0 && n_ctx <= (int64_t(1) << 24), "context size ", n_ctx, " is out of range");
  MemoryPlan mp;
  mp.device = device;
  const std::unique_ptr<model::Model> model = model::Model::load(options.model_path, {options.tokenizer_pre});
  const model::Config& c = model->config();
  const model::KvType kv_type = kv_type_of(options);
  mp.n_ctx = resolve_context(c, n_ctx, available_memory_bytes(), kv_type);
  mp.model_file_bytes = model->tensor_bytes();
  mp.kv_type = model::kv_type_name(kv_type);
  mp.kv_cache_bytes = options.swa_ring ? kv_cache_bytes_ring(c, mp.n_ctx, kv_type, options.m_max)
                                       : kv_cache_bytes(c, mp.n_ctx, kv_type);
  mp.kv_staging_bytes = kv_staging_bytes(c, mp.n_ctx, kv_type);
  {
    ThreadPool pool(1);
    model::CpuMatmul cpu(pool);
    const model::Forward f(c, model->weights(), cpu, pool);
    // + the prefill attention's score buffers, one per thread, for queries at the end of the context.
    const int threads = options.threads > 0 ? options.threads : std::max(1, int(std::thread::hardware_concurrency()));
    mp.host_scratch_bytes = f.scratch_bytes(options.m_max) + mp.kv_staging_bytes +
                            uint64_t(threads) * ops::attention_blocked_scratch_bytes(c.n_head, c.n_head_kv, mp.n_ctx, c.head_dim);
  }
  if (device == "cpu") {
    mp.mode = "none";
    const bool packs = !options.exact && !options.cpu_int8 && options.cpu_int4.empty() &&
                       ops::panel_kernel(quant::Type::Q8_0, ops::best_isa()) != nullptr;
    mp.reason = packs ? "cpu: q8_0, q4_0, q4_K and q6_K matmul weights run from a packed copy (about "
                        "their size in the file; their mapped pages are released), the rest from the "
                        "mapped file"
                      : "cpu: weights are read from the mapped file";
  } else {
    npu::Capabilities caps;
    if (share_from != nullptr) {
      caps = share_from->device()->caps();
    } else if (device == "sim") {
      caps.cores = options.npu.sim_cores;
      caps.domains = options.npu.sim_domains;
      caps.window_bytes = options.npu.sim_window_bytes;
    } else {
      npu::DeviceOptions dopts = options.npu;
      dopts.kind = device;
      caps = npu::Device::open(dopts)->caps();  // opening allocates nothing
    }
    weights::PlanOptions popts;
    popts.residency = options.residency;
    popts.budget_bytes = options.wcache_budget_bytes;
    popts.m_max = options.m_max;
    if (options.share_scratch_with != nullptr && options.share_scratch_with->plan() != nullptr) {
      popts.taken = weights::window_taken(*options.share_scratch_with->plan());
    }
    popts.wtype = resolve_npu_wtype(options.npu_wtype, model->weights());
    weights::Plan plan = make_plan(model->weights(), caps, popts);
    mp.window_capacity_bytes = caps.window_bytes;
    for (const weights::WindowTaken& t : popts.taken) mp.window_taken_bytes.push_back(t.footprint);
    if (!popts.taken.empty()) mp.window_joint_bytes = plan.window_used;
    uint64_t own_scratch = 0;  // as Engine's scratch_own_need_: before weights are shared
    for (uint32_t d = 0; d < plan.domains_used && d < plan.scratch.size(); ++d)
      for (uint64_t b : {plan.scratch[d].a, plan.scratch[d].c, plan.scratch[d].regcmd, plan.scratch[d].tasks,
                         plan.scratch[d].plan_regcmd_bytes(), plan.scratch[d].plan_task_bytes()})
        own_scratch += page_round(b);
    // Weights identical to share_weights_with's resident ones are not loaded (as Engine does).
    const Engine* const other = options.share_weights_with;
    std::vector<std::pair<int32_t, int32_t>> shared;
    if (other != nullptr) {
      weights::StoreOptions sopts;
      sopts.persist_path = options.persist_path;
      sopts.evict_src = options.evict_src;
      sopts.wtype = popts.wtype;
      weights::Store store(*model, sopts);
      shared = other->identical_weights(*model, store);
      if (!shared.empty()) {
        const SharedWeights sw = drop_shared(plan, shared);
        mp.weight_shared_bytes = sw.bytes;
        mp.weights_shared = sw.count;
      }
    }
    const std::vector<npu::ScratchNeed> needs = scratch_by_domain(plan, other != nullptr ? other->plan() : nullptr, shared);
    mp.mode = weights::residency_name(plan.mode);
    mp.reason = plan.reason;
    mp.domains_used = uint32_t(std::max<size_t>(plan.domains_used, needs.size()));
    mp.weight_device_bytes.assign(mp.domains_used, 0);
    mp.scratch_device_bytes.assign(mp.domains_used, 0);
    mp.scratch_caller_bytes.assign(mp.domains_used, 0);
    mp.window_bytes.assign(mp.domains_used, 0);
    if (plan.mode == weights::Residency::kResident) {
      for (const weights::WeightPlan& w : plan.weights) {
        for (const weights::Slice& sl : w.slices) {
          mp.weight_device_bytes[w.domain] += page_round(sl.bytes);
          mp.window_bytes[w.domain] += sl.footprint;
        }
      }
    } else {
      mp.stream_budget_bytes = plan.budget_bytes;
      mp.host_packed_bytes = host_packed_budget(plan, options.wcache_host_bytes);
      mp.window_bytes[0] += plan.budget_bytes;
    }
    // share_scratch_with: that scratch grows, buffer by buffer, to this model's need
    // (MatmulScratch::reserve reallocates a buffer that is too small, at least one page).
    const npu::MatmulScratch* const theirs =
        options.share_scratch_with != nullptr ? options.share_scratch_with->scratch() : nullptr;
    if (theirs != nullptr) mp.scratch_shared_saving = own_scratch;
    uint64_t scratch_growth = 0;
    for (uint32_t d = 0; d < needs.size(); ++d) {
      const npu::ScratchNeed& n = needs[d];
      if (n.total() == 0) {
        if (theirs != nullptr) mp.scratch_device_bytes[d] = theirs->bytes(d);
        continue;
      }
      const npu::ScratchNeed cap = theirs != nullptr ? theirs->capacity(d) : npu::ScratchNeed{};
      // The slot's four buffers, then the plan cache's two (when it has tasks to hold).
      const npu::ScratchNeed cap_bytes{0, 0, 0, 0, cap.plan_tasks};
      const bool plan_cache = n.plan_tasks > 0;
      const uint64_t need[] = {n.a, n.c, n.regcmd, n.tasks, plan_cache ? n.plan_regcmd_bytes() : 0,
                               plan_cache ? n.plan_task_bytes() : 0};
      const uint64_t have[] = {cap.a, cap.c, cap.regcmd, cap.tasks, page_round(cap_bytes.plan_regcmd_bytes()),
                               page_round(cap_bytes.plan_task_bytes())};
      for (int x = 0; x < 6; ++x) {
        if (x >= 4 && (need[x] == 0 || have[x] >= need[x])) {  // a plan cache that is not there or does not grow
          mp.scratch_device_bytes[d] += have[x];
          continue;
        }
        const bool grows = have[x] == 0 || have[x] < need[x];
        const uint64_t size = grows ? page_round(std::max<uint64_t>(need[x], kPage)) : have[x];
        mp.scratch_device_bytes[d] += size;
        scratch_growth += size - have[x];
        mp.window_bytes[d] += weights::iova_footprint(need[x]);
      }
      mp.scratch_caller_bytes[d] = npu::MatmulScratch::caller_bytes(n);
    }
    for (uint32_t d = 0; d < mp.domains_used; ++d) mp.dma_bytes += mp.weight_device_bytes[d];
    mp.dma_bytes += scratch_growth;
    mp.dma_bytes += mp.stream_budget_bytes;
    if (options.schedule != Schedule::kNpu) {  // as the Engine builds its HybridMatmul's Scheduler
      const Scheduler scheduler(options.schedule, npu::sim::load_board_profile(options.npu.board_profile),
                                std::max<uint32_t>(1, std::min<uint32_t>(3, caps.cores)), plan.m_max,
                                plan.mode == weights::Residency::kResident, plan.wtype,
                                int4_activations(options.npu_wtype));
      const PlannedCpuCopies copies = planned_cpu_copy_bytes(scheduler, model->weights(), plan);
      mp.cpu_copy_bytes = copies.bytes;
      mp.cpu_copy_weights = copies.weights;
      mp.cpu_copy_all_bytes = copies.all_bytes;
    }
  }
  mp.ram_bytes = mp.model_file_bytes + mp.dma_bytes + mp.kv_cache_bytes + mp.host_scratch_bytes + mp.cpu_copy_bytes +
                 mp.host_packed_bytes;
  return mp;
}

void Engine::wait_prefetch_idle() const {
  if (prefetcher_) prefetcher_->wait_idle();
}

EngineMemory Engine::memory() const {
  EngineMemory m;
  if (!plan_) {
    m.weight_bytes = model_->tensor_bytes();
    return m;
  }
  wait_prefetch_idle();
  const uint32_t domains = device_->caps().domains;
  m.weight_device_bytes.assign(domains, 0);
  m.scratch_device_bytes.assign(domains, 0);
  for (size_t u = 0; u < plan_->units.size(); ++u) {
    if (!cache_->is_loaded(int32_t(u))) continue;
    const weights::Unit& unit = plan_->units[u];
    const uint32_t d = plan_->weights[size_t(unit.weight)].domain;
    if (d < domains) m.weight_device_bytes[d] += page_round(plan_->slice(unit).bytes);
  }
  {
    std::lock_guard lock(*forward_mutex_);  // the scratch may grow during a forward pass
    for (uint32_t d = 0; d < domains; ++d) m.scratch_device_bytes[d] = scratch_->bytes(d);
  }
  for (uint32_t d = 0; d < domains; ++d) {
    m.weight_bytes += m.weight_device_bytes[d];
    m.scratch_bytes += m.scratch_device_bytes[d];
  }
  m.weight_shared_bytes = weight_shared_bytes_;
  m.weights_shared = weights_shared_;
  if (hybrid_ != nullptr) {
    std::lock_guard lock(*forward_mutex_);  // the CPU copies are made during forward passes
    m.cpu_weight_bytes = hybrid_->stats().cpu_weight_bytes;
  }
  m.scratch_shared = scratch_shared_;
  m.scratch_own_need = scratch_own_need_;
  for (const weights::WindowTaken& t : plan_->taken) m.window_taken_bytes.push_back(t.footprint);
  for (const npu::Buffer& b : weight_mem_) m.weight_external_bytes += b.size();
  {
    std::lock_guard lock(*forward_mutex_);
    for (uint32_t d = 0; d < domains; ++d) {
      if (scratch_->in_caller_memory(d)) m.scratch_external_bytes += scratch_->caller_bytes_placed(d);
    }
  }
  return m;
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
  r.prefetch_hits = c.prefetch_hits;
  r.prefetch_late = c.prefetch_late;
  r.prefetch_misses = c.prefetch_misses;
  r.prefetch_wasted = c.prefetch_wasted;
  r.prefetch_wasted_bytes = c.prefetch_wasted_bytes;
  r.expert_slot_bytes = plan_->expert_slot_bytes;
  r.expert_slots = plan_->expert_slots;
  if (modeled_loads_) {
    std::lock_guard lock(*forward_mutex_);  // updated during forward passes
    const weights::ModeledLoadStats& m = modeled_loads_->stats();
    r.modeled = true;
    r.modeled_load_ms = m.load_ns / 1e6;
    r.modeled_stall_ms = m.stall_ns / 1e6;
    r.modeled_prefetch_hidden_fraction = m.hidden_fraction();
    r.modeled_experts = modeled_loads_->routed_stats();
  }
  if (plan_->mode == weights::Residency::kStream && !plan_->expert_blocks.empty()) {
    r.expert_prefetch = weights::expert_prefetch_name(options_.expert_prefetch);
  }
  r.loaded = s.loaded;
  r.packed = s.packed;
  r.host_budget_bytes = c.host.budget_bytes;
  r.host_bytes = c.host.bytes;
  r.host_peak_bytes = c.host.peak_bytes;
  r.host_hits = c.host.hits;
  r.host_evictions = c.host.evictions;
  r.pack_ms = s.pack_ms;
  r.pack_load_ms = s.load_ms;
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
  j.key("prefetch_hits").value(prefetch_hits);
  j.key("prefetch_late").value(prefetch_late);
  j.key("prefetch_misses").value(prefetch_misses);
  j.key("prefetch_wasted").value(prefetch_wasted);
  j.key("prefetch_wasted_bytes").value(prefetch_wasted_bytes);
  j.key("expert_slot_bytes").value(expert_slot_bytes);
  j.key("expert_slots").value(uint64_t(expert_slots));
  if (modeled) {
    j.key("modeled_load_ms").value(modeled_load_ms);
    j.key("modeled_stall_ms").value(modeled_stall_ms);
    j.key("modeled_prefetch_hidden_fraction").value(modeled_prefetch_hidden_fraction);
  }
  if (!expert_prefetch.empty()) j.key("expert_prefetch").value(expert_prefetch);
  if (modeled && modeled_experts.acquires > 0) {
    const weights::ModeledRoutedStats& x = modeled_experts;
    j.key("modeled_experts").begin_object();
    j.key("acquires").value(x.acquires);
    j.key("reused").value(x.reused);
    j.key("hits").value(x.hits);
    j.key("late").value(x.late);
    j.key("misses").value(x.misses);
    j.key("hit_rate").value(x.hit_rate());
    j.key("wasted").value(x.wasted);
    j.key("wasted_bytes").value(x.wasted_bytes);
    j.end_object();
  }
  j.key("loaded").value(loaded);
  j.key("packed").value(packed);
  j.key("host_budget_bytes").value(host_budget_bytes);
  j.key("host_bytes").value(host_bytes);
  j.key("host_peak_bytes").value(host_peak_bytes);
  j.key("host_hits").value(host_hits);
  j.key("host_evictions").value(host_evictions);
  j.key("pack_ms").value(pack_ms);
  j.key("pack_load_ms").value(pack_load_ms);
  j.end_object();
  return j.str();
}

}  // namespace ork::runtime
