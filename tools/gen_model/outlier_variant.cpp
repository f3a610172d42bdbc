#include "gen_model/outlier_variant.h"

#include <cmath>
#include <set>
#include <string_view>

#include "core/error.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "quant/decode.h"

namespace ork::gen {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The tensor's values as f32 ([rows][row_length]).
std::vector<float> decoded(const gguf::TensorInfo& t) {
  std::vector<float> v(size_t(t.n_elements));
  const uint64_t row_bytes = t.n_bytes / t.rows();
  for (uint64_t r = 0; r < t.rows(); ++r)
    quant::decode_row(t.type, t.data + r * row_bytes, v.data() + r * t.row_length(), int64_t(t.row_length()));
  return v;
}

}  // namespace

std::vector<int64_t> default_outlier_channels(int64_t n_embd) {
  ORK_CHECK(n_embd >= 4, "outlier variant: n_embd ", n_embd, " has fewer than 4 channels");
  std::set<int64_t> seen;
  std::vector<int64_t> c;
  for (int64_t i = 0; int64_t(c.size()) < 4; ++i) {
    const int64_t v = (37 * i + 5) % n_embd;
    if (seen.insert(v).second) c.push_back(v);
  }
  return c;
}

void write_outlier_variant(const std::string& in, const std::string& out, float s,
                           const std::vector<int64_t>& channels) {
  ORK_CHECK(std::isfinite(s) && s > 0, "outlier variant: scale ", s, " is not a finite value > 0");
  const gguf::File f = gguf::File::open(in);
  const gguf::TensorInfo& norm0 = f.tensor("output_norm.weight");
  const int64_t n_embd = int64_t(norm0.n_elements);
  for (int64_t c : channels)
    ORK_CHECK(c >= 0 && c < n_embd, "outlier variant: channel ", c, " is outside 0..", n_embd - 1, " of ", in);
  const bool untied_output = f.find_tensor("output.weight") != nullptr;

  gguf::Writer w;
  w.set_alignment(f.alignment());
  for (const gguf::KeyValue& kv : f.metadata())
    if (kv.key != "general.alignment") w.add_value(kv.key, kv.value);
  for (const gguf::TensorInfo& t : f.tensors()) {
    const std::string_view name = t.name;
    const bool is_norm = name.rfind("blk.", 0) == 0 ? ends_with(name, ".attn_norm.weight") || ends_with(name, ".ffn_norm.weight")
                                                    : (name == "output_norm.weight" && untied_output);
    const bool is_fed = name.rfind("blk.", 0) == 0
                            ? ends_with(name, ".attn_q.weight") || ends_with(name, ".attn_k.weight") ||
                                  ends_with(name, ".attn_v.weight") || ends_with(name, ".ffn_gate.weight") ||
                                  ends_with(name, ".ffn_up.weight")
                            : name == "output.weight";
    if (!is_norm && !is_fed) {
      w.add_tensor(t.name, t.type, t.dims, t.data, t.n_bytes);
      continue;
    }
    ORK_CHECK(int64_t(t.row_length()) == n_embd, in, ": tensor ", name, " has rows of ", t.row_length(),
              ", not n_embd ", n_embd);
    std::vector<float> v = decoded(t);
    for (uint64_t r = 0; r < t.rows(); ++r)
      for (int64_t c : channels) {
        float& x = v[size_t(r * t.row_length() + uint64_t(c))];
        x = is_norm ? x * s : x / s;
      }
    w.add_tensor(t.name, quant::Type::F32, t.dims, v.data(), v.size() * sizeof(float));
  }
  w.write(out);
}

}  // namespace ork::gen
