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
// Routed experts' units (acquire's `routed`) are also classified, as the device found them when the
// matmul needed them: reused (on the device since its previous acquire: no load), hit (loaded and
// ready: no stall), late (loaded from a request made before the acquire, not ready in time), miss
// (nobody asked before the acquire). A wrong decode guess the runtime loaded costs the loader its
// bytes (charge_wasted) although compute never acquires it.
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

// How the routed experts' units were found (see above); the loads among them are hits + late + misses.
struct ModeledRoutedStats {
  uint64_t acquires = 0, reused = 0, hits = 0, late = 0, misses = 0;
  uint64_t wasted = 0, wasted_bytes = 0;  // units of wrong guesses loaded (charge_wasted), their bytes
  uint64_t loads() const { return hits + late + misses; }
  // Of the routed units that had to be loaded, the fraction ready when compute needed them.
  double hit_rate() const { return loads() > 0 ? double(hits) / double(loads()) : 0.0; }
};

class ModeledLoads {
 public:
  ModeledLoads(uint32_t slots, double load_gbps);
  // Compute acquires a unit at modeled time `now_ns` (not counting earlier stalls: they are added
  // here); `loaded`: the unit was loaded since its previous acquire. Returns this acquire's stall.
  // `requested_ns`: when the load could start at the earliest, on the timeline() of compute (0: any
  // time; a value past this acquire: the acquire's own time).
  // `routed`: a routed expert's unit (counted in routed_stats()).
  double acquire(double now_ns, uint64_t bytes, bool loaded, double requested_ns = 0, bool routed = false);
  // A unit of `bytes` the runtime loaded for a guess that the router then did not choose: the loader
  // spends bytes / load_gbps on it, starting no earlier than `requested_ns` (the guess, on timeline())
  // nor before the loads scheduled so far. Not in stats().load_ns (no acquire waits for it).
  void charge_wasted(uint64_t bytes, double requested_ns);
  // Compute's modeled time `now_ns` with the stalls so far added: the clock requests are stated in.
  double timeline(double now_ns) const { return now_ns + stats_.stall_ns; }
  const ModeledLoadStats& stats() const { return stats_; }
  const ModeledRoutedStats& routed_stats() const { return routed_; }

 private:
  uint32_t slots_;
  double bytes_per_ns_;
  std::deque<double> acquired_;  // the last `slots` acquire times (stalls included)
  double loader_free_ = 0;
  ModeledLoadStats stats_;
  ModeledRoutedStats routed_;
};

}  // namespace ork::weights
