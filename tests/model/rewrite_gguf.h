// Copies a GGUF file with keys and tensors dropped or added: for tests that need one defect in an
// otherwise valid model.
#pragma once

#include <functional>
#include <set>
#include <string>

#include "gguf/file.h"
#include "gguf/writer.h"

namespace ork::testing {

struct Edit {
  std::set<std::string> drop_keys;
  std::set<std::string> drop_tensors;
  std::function<void(gguf::Writer&)> add;  // called after the kept keys, before the kept tensors
};

// Writes `src` to `dst` with `e` applied.
inline void rewrite(const std::string& src, const std::string& dst, const Edit& e) {
  const gguf::File f = gguf::File::open(src);
  gguf::Writer w;
  for (const auto& kv : f.metadata()) {
    if (!e.drop_keys.count(std::string(kv.key))) w.add_value(kv.key, kv.value);
  }
  if (e.add) e.add(w);
  for (const auto& t : f.tensors()) {
    if (!e.drop_tensors.count(std::string(t.name))) w.add_tensor(t.name, t.type, t.dims, t.data, t.n_bytes);
  }
  w.write(dst);
}

}  // namespace ork::testing
