#include "model/weights.h"

#include <cmath>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/quote.h"
#include "model/moe_weights.h"
#include "quant/types.h"

namespace ork::model {
namespace {

std::string dims_str(const std::vector<uint64_t>& d) {
  std::string s = "{";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "}";
}

const gguf::TensorInfo& need(const gguf::File& f, const std::string& name,
                             std::vector<uint64_t> dims) {
  const gguf::TensorInfo& t = f.tensor(name);
  ORK_CHECK(t.dims == dims, f.path(), ": tensor ", quote(name), " has shape ", dims_str(t.dims),
            ", expected ", dims_str(dims));
  return t;
}

}  // namespace

std::unique_ptr<Weights> Weights::bind(const gguf::File& f, const Config& c) {
  std::unique_ptr<Weights> owner(new Weights);
  Weights& w = *owner;
  const uint64_t embd = uint64_t(c.n_embd), vocab = uint64_t(c.n_vocab);

  // A 1-D tensor decoded to f32 (norms and biases are tiny; any float type is accepted).
  auto vec = [&](const std::string& name, uint64_t n) -> const float* {
    const gguf::TensorInfo& t = need(f, name, {n});
    const auto& tr = quant::traits(t.type);
    ORK_CHECK(tr.block_size == 1, f.path(), ": tensor ", quote(name), " has type ", tr.name,
              "; a 1-D tensor must be f32, f16 or bf16");
    auto v = std::make_unique<std::vector<float>>(n);
    tr.decode(t.data, v->data(), int64_t(n));
    w.small_.push_back(std::move(v));
    return w.small_.back()->data();
  };
  auto linear = [&](const std::string& name, uint64_t k, uint64_t n) {
    Linear l;
    l.w = &need(f, name, {k, n});
    l.k = int64_t(k);
    l.n = int64_t(n);
    const auto& tr = quant::traits(l.w->type);
    ORK_CHECK(int64_t(k) % tr.block_size == 0, f.path(), ": tensor ", quote(name), " rows of ", k,
              " are not whole ", tr.name, " blocks");
    return l;
  };

  // Rows [row0, row0 + rows) of the 2-D tensor t as a Linear of its own (whole rows, so whole blocks).
  auto rows_of = [&](const gguf::TensorInfo& t, uint64_t row0, uint64_t rows, const char* part) {
    const uint64_t rb = uint64_t(quant::row_bytes(t.type, int64_t(t.dims[0])));
    w.view_names_.push_back(std::string(t.name) + ":" + part);
    gguf::TensorInfo v = t;
    v.name = w.view_names_.back();
    v.dims = {t.dims[0], rows};
    v.n_elements = t.dims[0] * rows;
    v.offset = t.offset + row0 * rb;
    v.n_bytes = rows * rb;
    v.data = t.data + row0 * rb;
    w.views_.push_back(v);
    Linear l;
    l.w = &w.views_.back();
    l.k = int64_t(t.dims[0]);
    l.n = int64_t(rows);
    return l;
  };
  // A 1-D f32/f16 table of n_rot/2 finite positive factors, or null when the file lacks it.
  auto factors = [&](const std::string& name) -> const float* {
    const gguf::TensorInfo* t = f.find_tensor(name);
    if (t == nullptr) return nullptr;
    ORK_CHECK(t->type == quant::Type::F32 || t->type == quant::Type::F16, f.path(), ": tensor ", quote(name),
              " has type ", quant::type_name(uint32_t(t->type)), "; it must be f32 or f16");
    ORK_CHECK(t->dims == std::vector<uint64_t>{uint64_t(c.n_rot / 2)}, f.path(), ": tensor ", quote(name),
              " has shape ", dims_str(t->dims), ", expected {", c.n_rot / 2,
              "} (rope.dimension_count / 2 = ", c.n_rot, " / 2)");
    const float* v = vec(name, uint64_t(c.n_rot / 2));
    for (int64_t i = 0; i < c.n_rot / 2; ++i) {
      ORK_CHECK(std::isfinite(v[i]) && v[i] > 0.0f, f.path(), ": tensor ", quote(name), " element ", i, " = ",
                v[i], " must be finite and > 0");
    }
    return v;
  };

  // One set of RoPE frequency factors for every layer, as llama.cpp binds it (LLM_TENSOR_ROPE_FREQS is
  // "rope_freqs", with no layer number). A per-layer variant is no known convention: refuse it
  // rather than ignore it.
  for (const gguf::TensorInfo& t : f.tensors()) {
    const std::string_view n = t.name;
    ORK_CHECK(!(n.starts_with("blk.") && n.ends_with(".rope_freqs.weight")), f.path(), ": tensor ", quote(n),
              " (per-layer RoPE frequency factors) is not supported; only one rope_freqs.weight "
              "shared by every layer is");
  }
  w.rope_freqs = factors("rope_freqs.weight");
  if (c.arch == Arch::kPhi3) {
    w.rope_long = factors("rope_factors_long.weight");
    w.rope_short = factors("rope_factors_short.weight");
  }

  w.token_embd = &need(f, "token_embd.weight", {embd, vocab});
  w.output_norm = vec("output_norm.weight", embd);
  w.output = c.tied_output ? linear("token_embd.weight", embd, vocab)
                           : linear("output.weight", embd, vocab);

  const uint64_t q = uint64_t(c.q_dim()), kv = uint64_t(c.kv_dim()), ff = uint64_t(c.n_ff);
  w.layers.resize(size_t(c.n_layer));
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights& l = w.layers[size_t(i)];
    l.attn_norm = vec(p + "attn_norm.weight", embd);
    if (const std::string qkv = p + "attn_qkv.weight"; f.find_tensor(qkv) != nullptr) {
      // Fused rows: q_dim of q, then kv_dim of k, then kv_dim of v (llama.cpp's build_qkv views).
      const gguf::TensorInfo& t = *linear(qkv, embd, q + 2 * kv).w;
      l.wq = rows_of(t, 0, q, "q");
      l.wk = rows_of(t, q, kv, "k");
      l.wv = rows_of(t, q + kv, kv, "v");
    } else {
      l.wq = linear(p + "attn_q.weight", embd, q);
      l.wk = linear(p + "attn_k.weight", embd, kv);
      l.wv = linear(p + "attn_v.weight", embd, kv);
    }
    l.wo = linear(p + "attn_output.weight", q, embd);
    if (c.qkv_bias) {
      l.wq.bias = vec(p + "attn_q.bias", q);
      l.wk.bias = vec(p + "attn_k.bias", kv);
      l.wv.bias = vec(p + "attn_v.bias", kv);
    }
    if (c.qk_norm) {
      l.q_norm = vec(p + "attn_q_norm.weight", uint64_t(c.head_dim));
      l.k_norm = vec(p + "attn_k_norm.weight", uint64_t(c.head_dim));
    }
    l.ffn_norm = vec(p + "ffn_norm.weight", embd);
    if (c.is_moe()) {
      MoeBinder::bind_layer(w, f, c, i, l);
    } else if (c.arch == Arch::kPhi3) {
      // ffn_up holds the gate's n_ff rows, then the up projection's (ggml_swiglu: silu(first half)).
      const gguf::TensorInfo& t = *linear(p + "ffn_up.weight", embd, 2 * ff).w;
      l.gate = rows_of(t, 0, ff, "gate");
      l.up = rows_of(t, ff, ff, "up");
    } else {
      l.gate = linear(p + "ffn_gate.weight", embd, ff);
      l.up = linear(p + "ffn_up.weight", embd, ff);
    }
    if (!c.is_moe()) l.down = linear(p + "ffn_down.weight", ff, embd);
    if (c.post_norms) {
      l.post_attn_norm = vec(p + "post_attention_norm.weight", embd);
      l.post_ffn_norm = vec(p + "post_ffw_norm.weight", embd);
    }
  }
  // The forward-pass order, fixed once the vector no longer moves.
  int32_t group = 0;
  auto add = [&](Linear* lin) {
    lin->index = int32_t(w.linears_.size());
    lin->group = group;
    w.linears_.push_back(lin);
  };
  for (LayerWeights& l : w.layers) {
    for (Linear* lin : {&l.wq, &l.wk, &l.wv, &l.wo}) add(lin);
    if (!c.is_moe()) {
      for (Linear* lin : {&l.gate, &l.up, &l.down}) add(lin);
    } else {
      if (l.sh_gate.w != nullptr) {
        for (Linear* lin : {&l.sh_gate, &l.sh_up, &l.sh_down}) add(lin);
      }
      for (size_t e = 0; e < l.exp_gate.size(); ++e) {
        ++group;
        for (Linear* lin : {&l.exp_gate[e], &l.exp_up[e], &l.exp_down[e]}) add(lin);
      }
    }
    ++group;
  }
  add(&w.output);
  // The norm weight in front of each linear that reads a normalized row (Linear::in_norm).
  for (LayerWeights& l : w.layers) {
    for (Linear* lin : {&l.wq, &l.wk, &l.wv}) lin->in_norm = l.attn_norm;
    for (Linear* lin : {&l.gate, &l.up, &l.sh_gate, &l.sh_up}) lin->in_norm = lin->w != nullptr ? l.ffn_norm : nullptr;
    for (std::vector<Linear>* experts : {&l.exp_gate, &l.exp_up}) {
      for (Linear& lin : *experts) lin.in_norm = l.ffn_norm;
    }
  }
  w.output.in_norm = w.output_norm;
  return owner;
}

}  // namespace ork::model
