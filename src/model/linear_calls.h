// model::linear_calls — the calls one forward pass makes on its MatmulBackend, as groups of linears
// that share one input (a matmul_group; one linear: matmul or matmul_glu), in the order
// model::Forward makes them:
//   dense layer: {q, k, v}, {o}, {gate, up}, {down}
//   MoE layer:   {q, k, v}, {o}, then per expert that has tokens {gate_e, up_e}, {down_e}, then the
//                shared expert's {gate, up}, {down} (qwen2moe)
//   last:        {output}, over the rows whose logits are wanted (`output` set)
// A MoE layer lists every expert; a pass runs only the routed ones, each over its own tokens.
// For whoever decides per call shape ahead of a pass (runtime::plan_memory's CPU copies of
// `--schedule auto`); tests/model/linear_calls_test.cpp checks the list against Forward's calls.
// Ownership: pointers into `w`, which must outlive the result.
#pragma once

#include <vector>

#include "model/weights.h"

namespace ork::model {

struct LinearCall {
  std::vector<const Linear*> weights;  // one input of weights[0]->k columns, one output each
  bool expert = false;                 // a routed expert's: its rows are the tokens routed to it
  bool output = false;                 // the output projection: rows = the logits wanted
};

std::vector<LinearCall> linear_calls(const Weights& w);

}  // namespace ork::model
