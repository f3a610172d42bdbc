#include "ops/attention_f16.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/fp16.h"
#include "ops/cpu_features.h"
#include "ops/softmax.h"
#include "ops/vec.h"

namespace ork::ops {
namespace {

ORK_VECTOR_CLONES void to_f32(const uint16_t* h, int64_t n, float* f) {
  for (int64_t i = 0; i < n; ++i) f[i] = f16_to_f32(h[i]);
}

// One (token, KV head): the `group` query heads qg[group][head_dim] against n_keys positions of the
// KV head's f16 slices kg, vg (row stride kv_stride halves); s holds group × n_keys scores, row a
// buffer of head_dim floats; o[group][head_dim] the outputs. Per head the operations of attend() in
// attention.cpp: dot, scale, soft-cap, softmax, then the weighted V rows in ascending key order.
ORK_VECTOR_CLONES void attend_group(const float* qg, int64_t group, const uint16_t* kg, const uint16_t* vg,
                                    int64_t n_keys, int64_t kv_stride, int64_t head_dim, float scale, float softcap,
                                    float* s, float* row, float* o) {
  for (int64_t j = 0; j < n_keys; ++j) {
    to_f32(kg + j * kv_stride, head_dim, row);
    for (int64_t h = 0; h < group; ++h) s[h * n_keys + j] = vec::dot(qg + h * head_dim, row, head_dim) * scale;
  }
  for (int64_t h = 0; h < group; ++h) {
    float* sh = s + h * n_keys;
    if (softcap > 0.0f) {
      for (int64_t j = 0; j < n_keys; ++j) sh[j] = softcap * std::tanh(sh[j] / softcap);
    }
    softmax(sh, n_keys);
  }
  std::fill(o, o + group * head_dim, 0.0f);
  for (int64_t j = 0; j < n_keys; ++j) {
    to_f32(vg + j * kv_stride, head_dim, row);
    for (int64_t h = 0; h < group; ++h) vec::axpy(s[h * n_keys + j], row, o + h * head_dim, head_dim);
  }
}

}  // namespace

void attention_f16(ThreadPool& pool, const float* q, int64_t n_q_tokens, int64_t pos0, int64_t n_head,
                   int64_t n_head_kv, int64_t head_dim, const uint16_t* k_cache, const uint16_t* v_cache,
                   float* out, const AttentionOptions& options) {
  check_attention_args(n_q_tokens, pos0, n_head, n_head_kv, head_dim, options);
  if (n_q_tokens == 0) return;
  const int64_t group = n_head / n_head_kv;
  const float scale = options.scale > 0.0f ? options.scale : 1.0f / std::sqrt(float(head_dim));
  const int64_t window = options.window;
  const int64_t kv_stride = n_head_kv * head_dim;  // halves between consecutive positions

  pool.parallel_for(n_q_tokens * n_head_kv, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scores, row;
    if (row.size() < size_t(head_dim)) row.resize(size_t(head_dim));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / n_head_kv;
      const int64_t g = task % n_head_kv;
      const int64_t p = pos0 + t;
      const int64_t first = window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
      const int64_t n_keys = p + 1 - first;
      const int64_t h0 = g * group;  // the group's first query head
      const uint16_t* kg = k_cache + (first - options.kv_pos0) * kv_stride + g * head_dim;
      const uint16_t* vg = v_cache + (first - options.kv_pos0) * kv_stride + g * head_dim;
      if (scores.size() < size_t(group * n_keys)) scores.resize(size_t(group * n_keys));
      attend_group(q + (t * n_head + h0) * head_dim, group, kg, vg, n_keys, kv_stride, head_dim, scale,
                   options.softcap, scores.data(), row.data(), out + (t * n_head + h0) * head_dim);
    }
  });
}

}  // namespace ork::ops
