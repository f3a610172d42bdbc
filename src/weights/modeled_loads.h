// weights::ModeledLoads — the board time of streaming weights (docs/board-model.md): when each
// streamed unit would be ready on an RK3588, and how long compute would wait for it, in the board
// model's time instead of the simulator's wall clock (which says nothing about a board).
//
// The model: one loader copies packed units into the NPU's buffers at `load_gbps`, one after
// another, in the order compute uses them, and may start a unit once compute has reached the unit
// `slots` acquires earlier (the prefetch depth the plan sized to the budget):
//   ready(s) = max(acquired(s − slots), ready(s − 1)) + bytes(s) / load_gbps
//   stall(s) = max(0, ready(s) − acquired(s));  compute continues at acquired(s) + stall(s).
// An acquire of a unit that was not loaded again since its previous use costs nothing.
// A unit nobody could ask for earlier also waits for its request: ready(s) = max(…, requested(s)) +
// bytes / load_gbps, where requested is when the router named a routed expert (or the predictor
// guessed it), and the acquire itself for a unit the prefetcher had not loaded (a miss).
// Thread-safety: called from the compute thread only (one forward pass at a time); stats() between
// passes.
#pragma once

#include <cstdint>
#include <deque>

namespace ork::weights {

struct ModeledLoadStats {
  uint64_t loads = 0;
  double load_ns = 0;   // Σ bytes / load_gbps
  double stall_ns = 0;  // Σ time compute waited
  double hidden_fraction() const { return load_ns > 0 ? 1.0 - stall_ns / load_ns : 1.0; }
};

class ModeledLoads {
 public:
  ModeledLoads(uint32_t slots, double load_gbps);
  // Compute acquires a unit at modeled time `now_ns` (not counting earlier stalls: they are added
  // here); `loaded`: the unit was loaded since its previous acquire. Returns this acquire's stall.
  // `requested_ns`: when the load could start at the earliest, on the timeline() of compute (0: any
  // time; a value past this acquire: the acquire's own time).
  double acquire(double now_ns, uint64_t bytes, bool loaded, double requested_ns = 0);
  // Compute's modeled time `now_ns` with the stalls so far added: the clock requests are stated in.
  double timeline(double now_ns) const { return now_ns + stats_.stall_ns; }
  const ModeledLoadStats& stats() const { return stats_; }

 private:
  uint32_t slots_;
  double bytes_per_ns_;
  std::deque<double> acquired_;  // the last `slots` acquire times (stalls included)
  double loader_free_ = 0;
  ModeledLoadStats stats_;
};

}  // namespace ork::weights
