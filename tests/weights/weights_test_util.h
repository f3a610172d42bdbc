// Shared helpers of the weights tests: generated models and file byte surgery.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "weights/packed.h"

namespace ork::weights::testutil {

// A small q8_0 llama model (2 layers, 15 linear weights incl. output) written to `path`.
inline std::unique_ptr<model::Model> make_model(const std::string& path, uint64_t seed = 1,
                                                quant::Type type = quant::Type::Q8_0) {
  gen::ModelSpec s = gen::preset("tiny-llama");
  s.weight_type = type;
  s.n_embd = 64;
  s.n_ff = 96;  // not a multiple of 32 rows for gate/up: exercises N padding
  s.n_vocab = 320;
  s.seed = seed;
  gen::write_model(s, path);
  return model::Model::load(path);
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

inline bool same_bytes(const PackedView& a, const PackedView& b) {
  if (a.n != b.n || a.k != b.k || a.dtype != b.dtype) return false;
  const uint64_t nb = packed_bytes(a.n, a.k, a.dtype);
  if (std::memcmp(a.bytes, b.bytes, nb) != 0) return false;
  if ((a.scales == nullptr) != (b.scales == nullptr)) return false;
  return a.scales == nullptr || std::memcmp(a.scales, b.scales, size_t(a.scale_count()) * 4) == 0;
}

}  // namespace ork::weights::testutil
