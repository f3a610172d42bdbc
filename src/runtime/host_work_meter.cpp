#include "runtime/host_work_meter.h"

#include "ops/attention_blocked.h"

namespace ork::runtime {

npu::sim::HostShape host_shape_of(const model::Config& c, model::KvType kv, bool norm_fold) {
  npu::sim::HostShape s;
  s.hidden = c.n_embd, s.layers = c.n_layer, s.heads = c.n_head, s.kv_heads = c.n_head_kv;
  s.head_dim = c.head_dim, s.vocab = c.n_vocab;
  s.ff = c.is_moe() ? c.n_expert_used * c.n_ff_exp + c.n_ff_shexp : c.n_ff;
  s.kv_elem_bytes = double(model::kv_row_bytes(kv, c.kv_dim())) / double(c.kv_dim());
  s.kv_converted = kv != model::KvType::kF32;
  s.kv_decode_in_place = kv == model::KvType::kF16;  // forward.cpp: ops::attention_f16 in decode
  s.int8_matmuls = true;
  s.qkv_bias = c.qkv_bias;
  s.norm_fold = norm_fold;
  s.glu_from_sums = true;         // MatmulBackend::ffn's fused form
  s.scale_in_readers = true;      // Forward's readers of unscaled results
  s.residual_in_quantize = true;  // model::ResidualNorm read by the quantizing passes
  s.moe_ffn = c.is_moe();         // ... except what a MoE FFN does otherwise (HostShape::moe_ffn)
  return s;
}

HostWorkMeter::HostWorkMeter(const npu::sim::BoardProfile& profile, const npu::sim::HostShape& shape)
    : profile_(profile), shape_(shape) {}

void HostWorkMeter::add_sequence_pass(int64_t pos0, int64_t n, int64_t out_rows) {
  // A pass of several rows runs ops::attention_blocked (forward.cpp), one row ops::attention.
  add_pass(npu::sim::sequence_pass(pos0, n, out_rows, n > 1 ? ops::kAttentionTileTokens : 1));
}

void HostWorkMeter::add_pass(const npu::sim::HostPass& pass) {
  const npu::sim::HostCost c = npu::sim::cost_host_pass(profile_, shape_, pass);
  std::lock_guard lock(mu_);
  ns_ += c.ns;
}

double HostWorkMeter::modeled_ns() const {
  std::lock_guard lock(mu_);
  return ns_;
}

}  // namespace ork::runtime
