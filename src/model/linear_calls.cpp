#include "model/linear_calls.h"

namespace ork::model {

std::vector<LinearCall> linear_calls(const Weights& w) {
  std::vector<LinearCall> calls;
  for (const LayerWeights& l : w.layers) {
    calls.push_back({{&l.wq, &l.wk, &l.wv}});
    calls.push_back({{&l.wo}});
    if (l.exp_gate.empty()) {
      calls.push_back({{&l.gate, &l.up}});
      calls.push_back({{&l.down}});
      continue;
    }
    for (size_t e = 0; e < l.exp_gate.size(); ++e) {
      calls.push_back({{&l.exp_gate[e], &l.exp_up[e]}, true});
      calls.push_back({{&l.exp_down[e]}, true});
    }
    if (l.sh_gate.w != nullptr) {
      calls.push_back({{&l.sh_gate, &l.sh_up}});
      calls.push_back({{&l.sh_down}});
    }
  }
  calls.push_back({{&w.output}, false, true});
  return calls;
}

}  // namespace ork::model
