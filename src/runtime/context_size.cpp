#include "runtime/context_size.h"

#include <algorithm>
#include <fstream>
#include <string>

#include "core/error.h"

namespace ork::runtime {

uint64_t kv_cache_bytes(const model::Config& c, int64_t n_ctx, model::KvType type) {
  return uint64_t(2) * uint64_t(c.n_layer) * uint64_t(n_ctx) * model::kv_row_bytes(type, c.kv_dim());
}

uint64_t kv_staging_bytes(const model::Config& c, int64_t n_ctx, model::KvType type) {
  if (type == model::KvType::kF32) return 0;
  return uint64_t(2) * uint64_t(n_ctx) * uint64_t(c.kv_dim()) * sizeof(float);
}

uint64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    uint64_t kib = 0;
    if (!(in >> kib)) return 0;
    if (key == "MemAvailable:") return kib * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

int64_t resolve_context(const model::Config& c, int64_t requested, uint64_t available, model::KvType type) {
  constexpr int64_t kMax = int64_t(1) << 24;
  ORK_CHECK(requested >= 0 && requested <= kMax, "context size ", requested, " is out of range [0, ", kMax, "]");
  if (available == 0) return requested > 0 ? requested : std::min<int64_t>(c.n_ctx_train, 4096);
  const uint64_t budget = available / 2;
  const uint64_t per_token = kv_cache_bytes(c, 1, type) + kv_staging_bytes(c, 1, type);
  const int64_t fits = int64_t(std::min<uint64_t>(budget / per_token, uint64_t(kMax)));
  auto mib = [](uint64_t b) { return b >> 20; };
  if (requested > 0) {
    ORK_CHECK(requested <= fits, "a context of ", requested, " tokens needs ",
              mib(kv_cache_bytes(c, requested, type) + kv_staging_bytes(c, requested, type)), " MiB of ",
              model::kv_type_name(type), " KV cache (", per_token, " bytes per token: 2 × ", c.n_layer, " layers × ",
              model::kv_row_bytes(type, c.kv_dim()), " bytes",
              type == model::KvType::kF32 ? "" : ", + 2 × 4 × kv_dim of f32 staging", "), more than the ",
              mib(budget), " MiB budget (half of the ", mib(available), " MiB available); at most ", fits,
              " tokens fit");
    return requested;
  }
  if (c.n_ctx_train <= fits) return c.n_ctx_train;
  const int64_t n = fits / 256 * 256;
  ORK_CHECK(n >= 256, "not even 256 tokens of context fit: ", per_token, " bytes of ", model::kv_type_name(type),
            " KV cache per token, ",
            mib(budget), " MiB budget (half of the ", mib(available), " MiB available)");
  return n;
}

}  // namespace ork::runtime
