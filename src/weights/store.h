// weights::Store — yields the packed device form of each linear weight of a model.
//
// Without a pack file every get() packs from the GGUF bytes (decode → quantize → tile). With
// StoreOptions::persist_path (ORK_PERSIST, --persist) the Store is a self-populating .orkpack cache
// (docs/orkpack.md):
//  - a valid pack for this model (fingerprint, layout, dtype = StoreOptions::wtype) serves hits straight from its
//    mapping (Packed::owner null); each entry's K, N and dtype are checked when the pack is opened
//    and its checksum the first time the entry is served in this process; a missing, stale or
//    damaged entry is repacked from the GGUF — a bad file never feeds wrong weights;
//  - whenever something had to be packed, a fresh pack is built in PATH.tmp from every weight
//    served, and published (index, footer, fsync, rename) once every linear weight of the model has
//    been served (or on finalize()); the Store then serves from the new file.
// Problems with the file are reported once each (ork::log::warn, one line) and never fail get().
// Mappings served from stay alive until the Store is destroyed.
// Thread-safety: get(), stats() and finalize() may be called from several threads at once (the
// prefetcher and the compute thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/model.h"
#include "weights/orkpack_format.h"
#include "weights/packed.h"

namespace ork::weights {

class PackReader;
class PackWriter;

// The packed bytes of one weight: a view, and whatever keeps it alive (owned bytes, or nothing when
// the view points into a mapping that outlives the Store).
struct Packed {
  PackedView view;
  std::shared_ptr<const PackedHost> owner;  // null when view borrows from a mapping
};

struct StoreStats {
  uint64_t packed = 0;       // weights packed from the GGUF
  uint64_t loaded = 0;       // weights served from a pack file
  double pack_ms = 0;        // time spent packing
  double load_ms = 0;        // time spent loading from a pack (checksum on first serve included)
};

struct StoreOptions {
  std::string persist_path;  // .orkpack to load from / build (ORK_PERSIST, --persist); "" = none
  bool evict_src = false;    // drop a weight's GGUF pages after packing it (ORK_EVICT_SRC)
  // Device form of the weights: kI8 (pack_linear) or kI4 (pack_linear_i4, weights/packed_int4.h).
  npu::Dtype wtype = npu::Dtype::kI8;
  // ORK_PERSIST and ORK_EVICT_SRC (flags, applied by the caller afterwards, win).
  static StoreOptions from_env();
};

class Store {
 public:
  // Opens persist_path when set (never throws for a bad or missing file: warns and repacks).
  // Packing runs its row groups on `pool` when given (the result is byte-identical to packing on one
  // thread); the pool must outlive the Store, and get() must not be called from inside a loop body
  // of that pool (ThreadPool's rule).
  Store(const model::Model& model, const StoreOptions& options, ThreadPool* pool = nullptr);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The packed form of `w` (a linear weight of this Store's model; ork::Error otherwise).
  Packed get(const model::Linear& w);

  StoreStats stats() const;

  // When a pack is being built: packs every weight not yet in it and publishes it now; afterwards
  // get() serves from the new file. No-op otherwise. Write failures are warned, not thrown.
  void finalize();
  // Whether a pack is being built (PATH.tmp open).
  bool building() const;
  // Whether a valid pack file is open for serving.
  bool has_pack() const;

 private:
  struct Source;
  std::shared_ptr<Source> open_source(const std::string& path, std::string* stale_note) const;
  void start_writer();
  Packed pack(const model::Linear& w);
  void append(const std::shared_ptr<PackWriter>& writer, const model::Linear& w,
              const PackedView& v);
  void publish();
  void disable_persist(const std::string& why);
  size_t index_of(const model::Linear& w) const;

  const model::Model& model_;
  StoreOptions options_;
  ThreadPool* pool_;  // packs row groups in parallel; null: on the calling thread
  Fingerprint fingerprint_;

  mutable std::mutex mutex_;  // guards everything below
  StoreStats stats_;
  std::shared_ptr<Source> source_;                // the pack served from, or null
  std::vector<std::shared_ptr<Source>> retired_;  // earlier sources: views may still point there
  std::shared_ptr<PackWriter> writer_;            // the pack being built, or null
  std::vector<uint8_t> seen_;                     // per linear: served at least once
  size_t seen_count_ = 0;
  bool persist_disabled_ = false;
  bool warned_entry_ = false;

  std::mutex publish_mutex_;  // one publish at a time
};

}  // namespace ork::weights
