// Generated models shared by several tests.
#pragma once

#include "gen_model/gen_model.h"

namespace ork::testing {

// A 4-layer Q8_0 llama (256 wide, ff 512, vocab 512, GQA 4:2): about 1.4 MB packed, so a 2 MiB
// simulated window holds about one layer — small enough to force several domains or streaming.
inline gen::ModelSpec small_q8_model() {
  gen::ModelSpec s;
  s.n_embd = 256;
  s.n_ff = 512;
  s.n_layer = 4;
  s.n_vocab = 512;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.weight_type = quant::Type::Q8_0;
  return s;
}

// A 3-layer gemma2/gemma3 (128 wide, ff 256, vocab 300, GQA 4:2, head dim 32, tied output, 512
// context) whose layers 0 and 2 attend within `window` tokens and layer 1 globally: the ring KV
// cache tests' model.
inline gen::ModelSpec sliding_window_gemma(const char* arch, int window, uint32_t seed) {
  gen::ModelSpec s;
  s.arch = arch;
  s.n_vocab = 300;
  s.n_embd = 128;
  s.n_ff = 256;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = 32;
  s.n_layer = 3;
  s.seed = seed;
  s.n_ctx = 512;
  s.tied_output = true;
  s.sliding_window = window;
  s.swa_pattern = 2;  // layers 0 and 2 sliding, 1 global
  return s;
}

}  // namespace ork::testing
