// runtime::BatchDecode — one decode step of several sequences in one forward pass (continuous
// batching): each Context of the step gets one token at its own position n_past(); every linear
// layer runs once with M = the number of contexts, RoPE/KV/attention per context over its own cache
// (model::Forward::eval_batch). Contexts may join and leave between steps; a prefill runs as its own
// Context::eval between steps.
//
// Each context's logits are those Context::eval would give it alone, bit for bit, on every backend
// (cpu exact and fast, cpu int8, npu/sim): their matmuls compute row i of Y from row i of X only
// (activations quantized per row). tests/runtime/batch_decode_test.cpp holds that to the bit.
//
// Ownership: borrows the Engine (must outlive it) and, per step, the contexts; owns the scratch of
// the batch and the logits. Thread-safety: one step() at a time per BatchDecode; a step holds the
// Engine's forward_mutex(), so it serializes with the contexts' own evals on other threads. The
// contexts of a step must not be evaluated elsewhere during it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/forward.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::runtime {

class BatchDecode {
 public:
  explicit BatchDecode(Engine& engine);

  // Evaluates tokens[i] after the n_past() tokens of ctxs[i] (its n_past() grows by one) for every i
  // in one pass; returns the logits [ctxs.size()][n_vocab], row i for ctxs[i], valid until the next
  // step. Throws ork::Error (and advances no context) for an empty or mismatched batch, a context of
  // another Engine, a context given twice, a full context, or what Forward::eval_batch throws.
  const float* step(std::span<Context* const> ctxs, std::span<const int32_t> tokens);

  // Host bytes of the batch's activations for the largest step so far.
  uint64_t scratch_bytes() const { return forward_.scratch_bytes(max_batch_); }

 private:
  Engine& engine_;
  model::Forward forward_;  // its own scratch, sized for the batch
  std::vector<model::Forward::Sequence> seqs_;
  std::vector<float> logits_;
  int64_t max_batch_ = 0;
};

}  // namespace ork::runtime
