// The .orkpack of a MoE model stores every expert weight as an entry of its own (the expert is the
// unit the cache streams), keyed by the expert view's name, and serves each back bit-identically.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "weights/convert.h"
#include "weights/pack_reader.h"
#include "weights/store.h"
#include "weights_test_util.h"

namespace ork::weights {
namespace {

TEST(StorePersistMoe, APackHasOneEntryPerExpertWeightServedBackBitIdentically) {
  testing::TempDir dir;
  gen::ModelSpec s = gen::preset("tiny-qwen2moe");  // routed experts and a shared expert
  gen::write_model(s, dir.file("m.gguf"));
  const auto model = model::Model::load(dir.file("m.gguf"));
  const std::string pack = dir.file("m.orkpack");
  const auto& ls = model->weights().linears();
  {
    Store st(*model, StoreOptions{pack, false});
    for (const model::Linear* l : ls) st.get(*l);
  }
  const auto reader = PackReader::open(pack);
  EXPECT_EQ(reader->entries().size(), ls.size());  // one entry per weight, experts included
  std::set<std::string> names;
  for (const PackEntry& e : reader->entries()) names.insert(e.name);
  EXPECT_EQ(names.size(), reader->entries().size());
  size_t experts = 0;
  for (const model::LayerWeights& l : model->weights().layers) {
    for (size_t e = 0; e < l.exp_gate.size(); ++e) {
      for (const model::Linear* w : {&l.exp_gate[e], &l.exp_up[e], &l.exp_down[e]}) {
        const PackEntry* entry = reader->find(w->name());
        ASSERT_NE(entry, nullptr) << w->name();
        EXPECT_EQ(entry->n, w->n);
        EXPECT_EQ(entry->k, w->k);
        EXPECT_NE(std::string(w->name()).find(":e" + std::to_string(e)), std::string::npos) << w->name();
        ++experts;
      }
    }
  }
  EXPECT_EQ(experts, size_t(s.n_layer * s.n_expert * 3));
  // Served back from the pack (loaded, not packed) with the bytes packing gives.
  Store again(*model, StoreOptions{pack, false});
  for (const model::Linear* l : ls) {
    const Packed p = again.get(*l);
    const PackedHost ref = pack_linear(*l, nullptr);
    EXPECT_TRUE(testutil::same_bytes(p.view, ref.view())) << l->name();
  }
  EXPECT_EQ(again.stats().loaded, ls.size());
  EXPECT_EQ(again.stats().packed, 0u);
}

}  // namespace
}  // namespace ork::weights
