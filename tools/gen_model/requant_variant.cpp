#include "gen_model/requant_variant.h"

#include <vector>

#include "core/error.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "quant/decode.h"

namespace ork::gen {

void write_requant_variant(const std::string& in, const std::string& out, quant::Type type) {
  const quant::TypeTraits& tt = quant::traits(type);
  const gguf::File f = gguf::File::open(in);
  gguf::Writer w;
  w.set_alignment(f.alignment());
  for (const gguf::KeyValue& kv : f.metadata())
    if (kv.key != "general.alignment") w.add_value(kv.key, kv.value);
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (t.dims.size() < 2) {
      w.add_tensor(t.name, t.type, t.dims, t.data, t.n_bytes);
      continue;
    }
    const int64_t k = int64_t(t.row_length());
    ORK_CHECK(k % tt.block_size == 0, in, ": tensor ", t.name, " has rows of ", k, ", not a whole number of ",
              tt.name, " blocks of ", tt.block_size);
    const uint64_t src_row = t.n_bytes / t.rows();
    const int64_t dst_row = quant::row_bytes(type, k);
    std::vector<uint8_t> bytes(size_t(dst_row) * t.rows());
    std::vector<float> row(static_cast<size_t>(k));
    for (uint64_t r = 0; r < t.rows(); ++r) {
      quant::decode_row(t.type, t.data + r * src_row, row.data(), k);
      tt.quantize(row.data(), bytes.data() + r * uint64_t(dst_row), k);
    }
    w.add_tensor(t.name, type, t.dims, bytes.data(), bytes.size());
  }
  w.write(out);
}

}  // namespace ork::gen
