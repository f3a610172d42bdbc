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

}  // namespace ork::testing
