// weights::convert — the dedicated .orkpack converter behind `ork convert` (docs/orkpack.md).
//
// Packs every linear weight of a model once, in forward-pass order, weight by weight: pack (rows in
// parallel on the pool) → append to OUT.tmp → free; then publishes OUT atomically. No model run.
// Peak memory: one weight's packed bytes plus, without evict_src, the source pages touched so far
// (with evict_src they are dropped after each weight, so the peak does not grow with model size).
// Throws ork::Error (naming the path) on a write failure; OUT.tmp is removed, OUT is untouched.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "model/model.h"
#include "npu/layout.h"

namespace ork::weights {

struct ConvertOptions {
  std::string output_path;
  // kI8 (pack_linear_grouped), kI4 (pack_linear_i4: what `--npu-wtype i4` loads) or kF16.
  npu::Dtype dtype = npu::Dtype::kI8;
  int threads = 0;         // 0: all cores
  bool evict_src = false;  // drop each source tensor's pages once packed (ORK_EVICT_SRC)
  // Called on the converting thread after each weight: weights done, total, pack bytes so far.
  std::function<void(uint64_t done, uint64_t total, uint64_t bytes)> progress;
};

struct ConvertResult {
  uint64_t weights = 0;         // entries written
  uint64_t bytes = 0;           // size of the published pack
  double ms = 0;                // wall time of the conversion
  uint64_t peak_rss_bytes = 0;  // VmHWM of this process at the end (0 when unknown)
};

ConvertResult convert(const model::Model& model, const ConvertOptions& options);

// Peak resident set size of this process (VmHWM of /proc/self/status), in bytes; 0 when unknown.
uint64_t peak_rss_bytes();

}  // namespace ork::weights
