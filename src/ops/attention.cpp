#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "ops/cpu_features.h"
#include "ops/softmax.h"
#include "ops/vec.h"

namespace ork::ops {
namespace {

// One (token, head): o[head_dim] = softmax(scale · K·q) · V over n_keys positions (row stride
// kv_stride floats); s holds n_keys scores.
ORK_FMA_CLONES void attend(const float* qh, const float* kg, const float* vg, int64_t n_keys,
                              int64_t kv_stride, int64_t head_dim, float scale, float softcap, float* s,
                              float* o) {
  for (int64_t j = 0; j < n_keys; ++j) s[j] = vec::dot_fma(qh, kg + j * kv_stride, head_dim) * scale;
  if (softcap > 0.0f) {
    for (int64_t j = 0; j < n_keys; ++j) s[j] = softcap * std::tanh(s[j] / softcap);
  }
  softmax(s, n_keys);
  std::fill(o, o + head_dim, 0.0f);
  for (int64_t j = 0; j < n_keys; ++j) vec::axpy_fma(s[j], vg + j * kv_stride, o, head_dim);
}

}  // namespace

void check_attention_args(int64_t n_q_tokens, int64_t pos0, int64_t n_head, int64_t n_head_kv, int64_t head_dim,
                          const AttentionOptions& options) {
  ORK_CHECK(std::isfinite(options.scale) && options.scale >= 0.0f, "ops::attention: scale=", options.scale,
            " must be finite and >= 0");
  ORK_CHECK(std::isfinite(options.softcap) && options.softcap >= 0.0f, "ops::attention: softcap=",
            options.softcap, " must be finite and >= 0");
  ORK_CHECK(options.window >= 0, "ops::attention: window=", options.window, " is negative");
  ORK_CHECK(options.kv_pos0 == 0 || (options.kv_pos0 > 0 && options.window > 0 && pos0 - options.window + 1 >= options.kv_pos0),
            "ops::attention: kv_pos0=", options.kv_pos0, " is past the first key of position ", pos0, " (window ",
            options.window, ")");
  ORK_CHECK(n_q_tokens >= 0, "ops::attention: n_q_tokens=", n_q_tokens, " is negative");
  ORK_CHECK(pos0 >= 0, "ops::attention: pos0=", pos0, " is negative");
  ORK_CHECK(head_dim >= 1, "ops::attention: head_dim=", head_dim, " must be >= 1");
  ORK_CHECK(n_head_kv >= 1 && n_head >= n_head_kv && n_head % n_head_kv == 0,
            "ops::attention: n_head=", n_head, " is not a positive multiple of n_head_kv=", n_head_kv);
}

void attention(ThreadPool& pool, const float* q, int64_t n_q_tokens, int64_t pos0, int64_t n_head,
               int64_t n_head_kv, int64_t head_dim, const float* k_cache, const float* v_cache,
               float* out) {
  attention(pool, q, n_q_tokens, pos0, n_head, n_head_kv, head_dim, k_cache, v_cache, out, AttentionOptions{});
}

void attention(ThreadPool& pool, const float* q, int64_t n_q_tokens, int64_t pos0, int64_t n_head,
               int64_t n_head_kv, int64_t head_dim, const float* k_cache, const float* v_cache,
               float* out, const AttentionOptions& options) {
  check_attention_args(n_q_tokens, pos0, n_head, n_head_kv, head_dim, options);
  if (n_q_tokens == 0) return;
  const int64_t group = n_head / n_head_kv;
  const float scale = options.scale > 0.0f ? options.scale : 1.0f / std::sqrt(float(head_dim));
  const float softcap = options.softcap;
  const int64_t window = options.window;
  const int64_t kv_stride = n_head_kv * head_dim;  // floats between consecutive positions

  pool.parallel_for(n_q_tokens * n_head, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scores;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / n_head;
      const int64_t h = task % n_head;
      const int64_t p = pos0 + t;
      const int64_t first = window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
      const int64_t n_keys = p + 1 - first;
      const float* qh = q + (t * n_head + h) * head_dim;
      const float* kg = k_cache + (first - options.kv_pos0) * kv_stride + (h / group) * head_dim;
      const float* vg = v_cache + (first - options.kv_pos0) * kv_stride + (h / group) * head_dim;
      if (scores.size() < size_t(n_keys)) scores.resize(size_t(n_keys));
      attend(qh, kg, vg, n_keys, kv_stride, head_dim, scale, softcap, scores.data(),
             out + (t * n_head + h) * head_dim);
    }
  });
}

}  // namespace ork::ops
