#include "model/moe_weights.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "core/quote.h"
#include "quant/types.h"

namespace ork::model {
namespace {

std::string dims_str(const std::vector<uint64_t>& d) {
  std::string s = "{";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "}";
}

const gguf::TensorInfo& need(const gguf::File& f, const std::string& name, const std::vector<uint64_t>& dims) {
  const gguf::TensorInfo* t = f.find_tensor(name);
  if (t == nullptr) {
    const std::string old = name.substr(0, name.find("_exps")) + ".0.weight";
    ORK_CHECK(f.find_tensor(old) == nullptr, f.path(), ": tensor ", quote(old),
              ": one 2-D tensor per expert (the older Mixtral layout) is not supported; convert the "
              "model again with llama.cpp's convert_hf_to_gguf.py (3-D ", quote(name), ")");
  }
  const gguf::TensorInfo& r = f.tensor(name);  // throws naming it when missing
  ORK_CHECK(r.dims == dims, f.path(), ": tensor ", quote(name), " has shape ", dims_str(r.dims), ", expected ",
            dims_str(dims));
  return r;
}

void check_rows(const gguf::File& f, const gguf::TensorInfo& t) {
  const auto& tr = quant::traits(t.type);
  ORK_CHECK(int64_t(t.dims[0]) % tr.block_size == 0, f.path(), ": tensor ", quote(t.name), " rows of ",
            t.dims[0], " are not whole ", tr.name, " blocks");
}

}  // namespace

void MoeBinder::bind_layer(Weights& w, const gguf::File& f, const Config& c, int64_t il, LayerWeights& l) {
  const std::string p = "blk." + std::to_string(il) + ".";
  const uint64_t embd = uint64_t(c.n_embd), n_exp = uint64_t(c.n_expert), ff = uint64_t(c.n_ff_exp);

  // Every element of t decoded to f32, owned by w (the router and the shared-expert gate are small).
  auto decoded = [&](const gguf::TensorInfo& t) -> const float* {
    check_rows(f, t);
    auto v = std::make_unique<std::vector<float>>(t.n_elements);
    quant::traits(t.type).decode(t.data, v->data(), int64_t(t.n_elements));
    w.small_.push_back(std::move(v));
    return w.small_.back()->data();
  };
  // The n_expert 2-D slices {k, n} of the 3-D tensor `name` {k, n, n_expert}.
  auto experts = [&](const std::string& name, uint64_t k, uint64_t n) {
    const gguf::TensorInfo& t = need(f, name, {k, n, n_exp});
    check_rows(f, t);
    const uint64_t bytes = n * uint64_t(quant::row_bytes(t.type, int64_t(k)));
    std::vector<Linear> out(static_cast<size_t>(n_exp));
    for (uint64_t e = 0; e < n_exp; ++e) {
      w.view_names_.push_back(std::string(t.name) + ":e" + std::to_string(e));
      gguf::TensorInfo v = t;
      v.name = w.view_names_.back();
      v.dims = {k, n};
      v.n_elements = k * n;
      v.offset = t.offset + e * bytes;
      v.n_bytes = bytes;
      v.data = t.data + e * bytes;
      w.views_.push_back(v);
      Linear& lin = out[size_t(e)];
      lin.w = &w.views_.back();
      lin.k = int64_t(k);
      lin.n = int64_t(n);
    }
    return out;
  };
  auto linear = [&](const std::string& name, uint64_t k, uint64_t n) {
    Linear lin;
    lin.w = &need(f, name, {k, n});
    check_rows(f, *lin.w);
    lin.k = int64_t(k);
    lin.n = int64_t(n);
    return lin;
  };

  l.router = decoded(need(f, p + "ffn_gate_inp.weight", {embd, n_exp}));
  l.exp_gate = experts(p + "ffn_gate_exps.weight", embd, ff);
  l.exp_up = experts(p + "ffn_up_exps.weight", embd, ff);
  l.exp_down = experts(p + "ffn_down_exps.weight", ff, embd);
  if (c.n_ff_shexp > 0) {
    const uint64_t sh = uint64_t(c.n_ff_shexp);
    l.sh_router = decoded(need(f, p + "ffn_gate_inp_shexp.weight", {embd}));
    l.sh_gate = linear(p + "ffn_gate_shexp.weight", embd, sh);
    l.sh_up = linear(p + "ffn_up_shexp.weight", embd, sh);
    l.sh_down = linear(p + "ffn_down_shexp.weight", sh, embd);
  }
}

}  // namespace ork::model
