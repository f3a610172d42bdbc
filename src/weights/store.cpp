#include "weights/store.h"

#include <cmath>

#include <sys/stat.h>

#include "core/env.h"
#include "core/error.h"
#include "core/log.h"
#include "core/quote.h"
#include "core/timer.h"
#include "weights/pack_grouped.h"
#include "weights/packed_int4.h"
#include "weights/pack_reader.h"
#include "weights/pack_writer.h"

namespace ork::weights {

namespace {
enum : uint8_t { kUnknown = 0, kGood = 1, kBad = 2 };
}

// An opened pack and, per linear weight of the model, its matching entry and checksum state.
struct Store::Source {
  std::unique_ptr<PackReader> reader;
  std::vector<const PackEntry*> entry;             // null: absent or K/N/dtype mismatch
  std::unique_ptr<std::atomic<uint8_t>[]> state;   // kUnknown / kGood / kBad
};

StoreOptions StoreOptions::from_env() {
  StoreOptions o;
  o.persist_path = env_string("ORK_PERSIST").value_or("");
  o.evict_src = env_flag("ORK_EVICT_SRC", false);
  return o;
}

Store::Store(const model::Model& model, const StoreOptions& options, ThreadPool* pool)
    : model_(model), options_(options), pool_(pool) {
  const auto& linears = model_.weights().linears();
  seen_.assign(linears.size(), 0);
  ORK_CHECK(options_.wtype == npu::Dtype::kI8 || options_.wtype == npu::Dtype::kI4, "weight store: device type ",
            npu::dtype_name(options_.wtype), " is not i8 or i4");
  if (options_.persist_path.empty()) return;
  fingerprint_ = fingerprint_of(model_.file());
  const std::string& path = options_.persist_path;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    try {
      std::string note;
      source_ = open_source(path, &note);
      if (!note.empty()) log::warn(note);
    } catch (const Error& e) {
      log::warn(e.what(), "; repacking");
    }
  } else {
    log::debug(path, ": no pack yet; packing and building it");
  }
  bool complete = source_ != nullptr;
  if (complete) {
    for (const PackEntry* e : source_->entry) complete = complete && e != nullptr;
  }
  if (!complete) start_writer();
}

Store::~Store() = default;

std::shared_ptr<Store::Source> Store::open_source(const std::string& path,
                                                  std::string* stale_note) const {
  auto src = std::make_shared<Source>();
  src->reader = PackReader::open(path);
  check_pack_source(*src->reader, fingerprint_, options_.wtype);
  const auto& linears = model_.weights().linears();
  src->entry.assign(linears.size(), nullptr);
  src->state = std::make_unique<std::atomic<uint8_t>[]>(linears.size());
  size_t stale = 0;
  std::string first;
  for (size_t i = 0; i < linears.size(); ++i) {
    src->state[i].store(kUnknown);
    const model::Linear& l = *linears[i];
    const PackEntry* e = src->reader->find(l.name());
    if (e != nullptr && e->k == l.k && e->n == l.n && e->dtype == options_.wtype) {
      src->entry[i] = e;
      continue;
    }
    if (stale++ == 0) {
      first = e == nullptr ? str_cat("", quote(l.name()), " is missing")
                           : str_cat("", quote(l.name()), " is ", e->n, "x", e->k, " ",
                                     npu::dtype_name(e->dtype), ", the model's is ", l.n, "x",
                                     l.k, " ", npu::dtype_name(options_.wtype));
    }
  }
  if (stale > 0 && stale_note != nullptr) {
    *stale_note = str_cat(path, ": ", stale, " of ", linears.size(), " weights missing or stale (",
                          first, "); repacking them");
  }
  return src;
}

void Store::start_writer() {
  try {
    writer_ = std::make_shared<PackWriter>(options_.persist_path, fingerprint_, options_.wtype);
  } catch (const Error& e) {
    persist_disabled_ = true;
    log::warn(e.what(), "; not persisting");
  }
}

void Store::disable_persist(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (persist_disabled_) return;
  persist_disabled_ = true;
  writer_.reset();  // the last reference removes PATH.tmp
  log::warn(why, "; not persisting");
}

size_t Store::index_of(const model::Linear& w) const {
  const auto& linears = model_.weights().linears();
  ORK_CHECK(w.index >= 0 && size_t(w.index) < linears.size() && linears[size_t(w.index)]->w == w.w,
            "Store::get: '", w.w != nullptr ? w.name() : std::string_view("?"),
            "' (index ", w.index, ") is not a linear weight of this model");
  return size_t(w.index);
}

Packed Store::pack(const model::Linear& w) {
  Stopwatch sw;
  auto host = std::make_shared<PackedHost>(options_.wtype == npu::Dtype::kI4 ? pack_linear_i4(w, pool_)
                                                                             : pack_linear_grouped(w, npu::Dtype::kI8, pool_));
  const double ms = sw.elapsed_ms();
  if (options_.evict_src) model_.file().mapping().drop_pages(w.w->offset, w.w->n_bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.packed;
    stats_.pack_ms += ms;
  }
  Packed p;
  p.view = host->view();
  p.owner = std::move(host);
  return p;
}

void Store::append(const std::shared_ptr<PackWriter>& writer, const model::Linear& w,
                   const PackedView& v) {
  try {
    writer->append(w.name(), v);
  } catch (const Error& e) {
    disable_persist(e.what());
  }
}

namespace {

// True when every scale of v is finite (f16 packs have none).
bool scales_finite(const PackedView& v) {
  if (v.scales == nullptr) return true;
  for (int64_t r = 0; r < v.scale_count(); ++r) {
    if (!std::isfinite(v.scales[r])) return false;
  }
  return true;
}

}  // namespace

Packed Store::get(const model::Linear& w) {
  const size_t i = index_of(w);
  std::shared_ptr<Source> src;
  std::shared_ptr<PackWriter> writer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    src = source_;
    writer = writer_;
  }
  Packed out;
  bool hit = false;
  if (src != nullptr && src->entry[i] != nullptr) {
    Stopwatch sw;
    const PackEntry& e = *src->entry[i];
    uint8_t st = src->state[i].load(std::memory_order_acquire);
    if (st == kUnknown) {
      // Damaged: a failed checksum, or scales that are not finite (a pack whose checksums hold over
      // NaN/Inf scales was written wrong and would make every output of that weight NaN).
      st = src->reader->verify(e) && scales_finite(src->reader->view(e)) ? kGood : kBad;
      src->state[i].store(st, std::memory_order_release);
    }
    if (st == kGood) {
      out.view = src->reader->view(e);
      hit = true;
      const double ms = sw.elapsed_ms();
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.loaded;
      stats_.load_ms += ms;
    } else {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!warned_entry_) {
        warned_entry_ = true;
        log::warn(src->reader->path(), ": entry ", quote(e.name), " is damaged (checksum or non-finite scales); repacking");
      } else {
        log::debug(src->reader->path(), ": entry ", quote(e.name), " is damaged (checksum or non-finite scales); repacking");
      }
      if (writer_ == nullptr && !persist_disabled_) start_writer();
      writer = writer_;
    }
  }
  if (!hit) out = pack(w);
  if (writer != nullptr && !writer->contains(w.name())) append(writer, w, out.view);

  bool publish_now = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (seen_[i] == 0) {
      seen_[i] = 1;
      ++seen_count_;
    }
    publish_now = writer_ != nullptr && seen_count_ == seen_.size();
  }
  if (publish_now) publish();
  return out;
}

void Store::finalize() { publish(); }

void Store::publish() {
  std::lock_guard<std::mutex> publishing(publish_mutex_);
  std::shared_ptr<Source> src;
  std::shared_ptr<PackWriter> writer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    src = source_;
    writer = writer_;
  }
  if (writer == nullptr || writer->finalized()) return;
  const auto& linears = model_.weights().linears();
  try {
    for (size_t i = 0; i < linears.size(); ++i) {
      const model::Linear& l = *linears[i];
      if (writer->contains(l.name())) continue;
      bool from_pack = false;
      if (src != nullptr && src->entry[i] != nullptr) {
        const PackEntry& e = *src->entry[i];
        uint8_t st = src->state[i].load(std::memory_order_acquire);
        if (st == kUnknown) {
          // Damaged: a failed checksum, or scales that are not finite (a pack whose checksums hold over
      // NaN/Inf scales was written wrong and would make every output of that weight NaN).
      st = src->reader->verify(e) && scales_finite(src->reader->view(e)) ? kGood : kBad;
          src->state[i].store(st, std::memory_order_release);
        }
        if (st == kGood) {
          writer->append(l.name(), src->reader->view(e));
          from_pack = true;
        }
      }
      if (!from_pack) {
        const Packed p = pack(l);
        writer->append(l.name(), p.view);
      }
    }
    writer->finalize();
  } catch (const Error& e) {
    disable_persist(e.what());
    return;
  }
  std::shared_ptr<Source> fresh;
  try {
    std::string note;
    fresh = open_source(options_.persist_path, &note);
    ORK_CHECK(note.empty(), note);
  } catch (const Error& e) {
    log::warn(e.what(), " (just written); packing from the GGUF");
    fresh.reset();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (source_ != nullptr) retired_.push_back(source_);
  source_ = fresh;
  writer_.reset();
  log::debug(options_.persist_path, ": pack published (", linears.size(), " weights)");
}

StoreStats Store::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

bool Store::building() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writer_ != nullptr;
}

bool Store::has_pack() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return source_ != nullptr;
}

}  // namespace ork::weights
