#include "model/moe_config.h"

#include <string>

#include "core/error.h"

namespace ork::model {
namespace {

// A scalar unsigned key; a per-layer array (llama.cpp's get_key_or_arr) is refused.
uint64_t scalar_uint(const gguf::File& f, const std::string& key, uint64_t def) {
  const gguf::Value* v = f.find(key);
  ORK_CHECK(v == nullptr || v->type != gguf::ValueType::ARRAY, f.path(), ": ", key,
            " as a per-layer array is not supported; one value for every layer is");
  return f.get_uint_or(key, def);
}

}  // namespace

void read_moe(const gguf::File& f, Config& c) {
  const std::string p = c.arch_name + ".";
  const bool qwen_moe = c.arch == Arch::kQwen2Moe || c.arch == Arch::kQwen3Moe;
  const uint64_t n_expert = scalar_uint(f, p + "expert_count", 0);
  if (n_expert == 0) {
    ORK_CHECK(!qwen_moe, f.path(), ": ", p, "expert_count is missing or 0; ", c.arch_name,
              " needs experts");
    return;
  }
  ORK_CHECK(qwen_moe || c.arch == Arch::kLlama, f.path(), ": ", p, "expert_count = ", n_expert,
            ", but experts are supported on llama, qwen2moe and qwen3moe only");
  ORK_CHECK(n_expert <= uint64_t(kMaxExperts), f.path(), ": ", p, "expert_count = ", n_expert,
            " is out of range [1, ", kMaxExperts, "]");
  const uint64_t used = scalar_uint(f, p + "expert_used_count", 0);
  ORK_CHECK(used >= 1 && used <= n_expert, f.path(), ": ", p, "expert_used_count = ", used,
            " is out of range [1, expert_count = ", n_expert, "]");
  c.n_expert = int64_t(n_expert);
  c.n_expert_used = int64_t(used);
  if (qwen_moe) {
    const uint64_t def = uint64_t(c.n_ff / c.n_expert_used);
    const uint64_t ff = scalar_uint(f, p + "expert_feed_forward_length", 0);
    c.n_ff_exp = int64_t(ff != 0 ? ff : def);
  } else {
    c.n_ff_exp = c.n_ff;
  }
  ORK_CHECK(c.n_ff_exp >= 1 && c.n_ff_exp <= (int64_t(1) << 20), f.path(), ": ", p,
            "expert_feed_forward_length = ", c.n_ff_exp, " is out of range [1, 2^20]");
  if (c.arch == Arch::kQwen2Moe) {
    const uint64_t sh = scalar_uint(f, p + "expert_shared_feed_forward_length", 0);
    c.n_ff_shexp = sh != 0 ? int64_t(sh) : c.n_ff;
    ORK_CHECK(c.n_ff_shexp <= (int64_t(1) << 20), f.path(), ": ", p, "expert_shared_feed_forward_length = ",
              c.n_ff_shexp, " is out of range [1, 2^20]");
  }
  c.moe_norm_weights = c.arch != Arch::kQwen2Moe;
}

}  // namespace ork::model
