// model::MoeBinder — binds a mixture-of-experts layer's tensors (llama.cpp's names, gguf-py
// constants.py MODEL_TENSOR.FFN_*_EXP / FFN_GATE_INP / FFN_*_SHEXP) into a Weights object:
//   blk.N.ffn_gate_inp.weight        {n_embd, n_expert}            router (any float or GGUF type)
//   blk.N.ffn_gate_exps.weight       {n_embd, n_ff_exp, n_expert}  expert gates
//   blk.N.ffn_up_exps.weight         {n_embd, n_ff_exp, n_expert}  expert ups
//   blk.N.ffn_down_exps.weight       {n_ff_exp, n_embd, n_expert}  expert downs
//   qwen2moe also: blk.N.ffn_gate_inp_shexp.weight {n_embd}, ffn_{gate,up}_shexp {n_embd, n_ff_shexp},
//   ffn_down_shexp {n_ff_shexp, n_embd}.
// Expert e of a 3-D tensor is rows [e·N, (e+1)·N) of the tensor read as 2-D (ggml's order: dims[2]
// outermost), a view named "<tensor>:e<e>" into the mapping. Mixtral files of the older layout
// (one 2-D tensor per expert, blk.N.ffn_gate.E.weight) are refused with a message.
#pragma once

#include <cstdint>

#include "gguf/file.h"
#include "model/config.h"
#include "model/weights.h"

namespace ork::model {

struct MoeBinder {
  // Binds layer il's router, experts and shared expert into l (owned views and decoded vectors go
  // into w). Throws ork::Error naming the tensor when one is missing or has the wrong shape or a
  // row length that is not whole blocks of its type.
  static void bind_layer(Weights& w, const gguf::File& f, const Config& c, int64_t il, LayerWeights& l);
};

}  // namespace ork::model
