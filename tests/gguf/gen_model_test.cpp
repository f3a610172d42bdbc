// The tiny-model generator: determinism, llama.cpp tensor/metadata conventions, vocab validity.
#include "gen_model/gen_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "build_dirs.h"
#include "core/error.h"
#include "gen_model/vocab.h"
#include "gguf/file.h"
#include "gguf/test_util.h"

namespace ork::gen {
namespace {

using gguf::File;
using gguf::ValueType;
using gguf::testing::TempDir;

using Shapes = std::map<std::string, std::vector<uint64_t>>;

// The tensors a spec must produce, written out from llama.cpp's naming convention (independent of
// tensor_specs()).
Shapes expected_shapes(const ModelSpec& s) {
  const uint64_t e = uint64_t(s.n_embd), v = uint64_t(s.n_vocab), ff = uint64_t(s.n_ff);
  const uint64_t hd = s.head_dim ? uint64_t(s.head_dim) : e / uint64_t(s.n_head);
  const uint64_t q = uint64_t(s.n_head) * hd, kv = uint64_t(s.n_head_kv) * hd;
  const bool gemma = s.arch == "gemma2" || s.arch == "gemma3", phi3 = s.arch == "phi3";
  const uint64_t half_rot = (s.n_rot ? uint64_t(s.n_rot) : hd) / 2;
  Shapes m;
  m["token_embd.weight"] = {e, v};
  if (!s.longrope.empty()) {  // llama.cpp's LLM_TENSOR_ROPE_FACTORS_LONG / _SHORT, no layer number
    m["rope_factors_long.weight"] = {half_rot};
    m["rope_factors_short.weight"] = {half_rot};
  }
  m["output_norm.weight"] = {e};
  if (!s.tied_output) m["output.weight"] = {e, v};
  for (int i = 0; i < s.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    m[b + "attn_norm.weight"] = {e};
    if (phi3 && s.fused_qkv) {
      m[b + "attn_qkv.weight"] = {e, q + 2 * kv};
    } else {
      m[b + "attn_q.weight"] = {e, q};
      m[b + "attn_k.weight"] = {e, kv};
      m[b + "attn_v.weight"] = {e, kv};
    }
    m[b + "attn_output.weight"] = {q, e};
    m[b + "ffn_norm.weight"] = {e};
    if (s.n_expert > 0) {  // llama.cpp's LLM_TENSOR_FFN_GATE_INP / _EXPS / _SHEXP
      const uint64_t x = uint64_t(s.n_expert);
      const uint64_t fe = s.arch == "llama" ? ff : s.n_ff_exp > 0 ? uint64_t(s.n_ff_exp) : ff / uint64_t(s.n_expert_used);
      m[b + "ffn_gate_inp.weight"] = {e, x};
      m[b + "ffn_gate_exps.weight"] = {e, fe, x};
      m[b + "ffn_up_exps.weight"] = {e, fe, x};
      m[b + "ffn_down_exps.weight"] = {fe, e, x};
      if (s.arch == "qwen2moe") {
        const uint64_t sh = s.n_ff_shexp > 0 ? uint64_t(s.n_ff_shexp) : ff;
        m[b + "ffn_gate_inp_shexp.weight"] = {e};
        m[b + "ffn_gate_shexp.weight"] = {e, sh};
        m[b + "ffn_up_shexp.weight"] = {e, sh};
        m[b + "ffn_down_shexp.weight"] = {sh, e};
      }
    } else if (phi3) {
      m[b + "ffn_up.weight"] = {e, 2 * ff};  // gate rows, then up rows
    } else {
      m[b + "ffn_gate.weight"] = {e, ff};
      m[b + "ffn_up.weight"] = {e, ff};
    }
    if (s.n_expert == 0) m[b + "ffn_down.weight"] = {ff, e};
    if (gemma) {
      m[b + "post_attention_norm.weight"] = {e};
      m[b + "post_ffw_norm.weight"] = {e};
    }
    if (s.arch == "qwen2" || s.arch == "qwen2moe") {
      m[b + "attn_q.bias"] = {q};
      m[b + "attn_k.bias"] = {kv};
      m[b + "attn_v.bias"] = {kv};
    }
    if (s.arch == "qwen3" || s.arch == "qwen3moe" || s.arch == "gemma3") {
      m[b + "attn_q_norm.weight"] = {hd};
      m[b + "attn_k_norm.weight"] = {hd};
    }
  }
  return m;
}

void check_model(const ModelSpec& s, const File& f) {
  const Shapes want = expected_shapes(s);
  ASSERT_EQ(f.tensors().size(), want.size());
  for (const gguf::TensorInfo& t : f.tensors()) {
    const std::string name(t.name);
    SCOPED_TRACE(name);
    auto it = want.find(name);
    ASSERT_NE(it, want.end()) << "unexpected tensor";
    EXPECT_EQ(t.dims, it->second);
    const bool router = name.ends_with(".ffn_gate_inp.weight");  // kept f32, as llama.cpp's quantizer does
    EXPECT_EQ(t.type, t.dims.size() >= 2 && !router ? s.weight_type : quant::Type::F32);
  }
  if (s.n_expert > 0) {
    EXPECT_EQ(f.get_uint(s.arch + ".expert_count"), uint64_t(s.n_expert));
    EXPECT_EQ(f.get_uint(s.arch + ".expert_used_count"), uint64_t(s.n_expert_used));
  } else {
    EXPECT_EQ(f.find(s.arch + ".expert_count"), nullptr);
  }
  const std::string a = s.arch;
  EXPECT_EQ(f.get_string("general.architecture"), a);
  EXPECT_EQ(f.get_uint("general.alignment"), 32u);
  EXPECT_EQ(f.get_uint(a + ".vocab_size"), uint64_t(s.n_vocab));
  EXPECT_EQ(f.get_uint(a + ".context_length"), uint64_t(s.n_ctx));
  EXPECT_EQ(f.get_uint(a + ".embedding_length"), uint64_t(s.n_embd));
  EXPECT_EQ(f.get_uint(a + ".block_count"), uint64_t(s.n_layer));
  EXPECT_EQ(f.get_uint(a + ".feed_forward_length"), uint64_t(s.n_ff));
  EXPECT_EQ(f.get_uint(a + ".attention.head_count"), uint64_t(s.n_head));
  EXPECT_EQ(f.get_uint(a + ".attention.head_count_kv"), uint64_t(s.n_head_kv));
  EXPECT_FLOAT_EQ(float(f.get_float(a + ".attention.layer_norm_rms_epsilon")), s.rms_eps);
  EXPECT_FLOAT_EQ(float(f.get_float(a + ".rope.freq_base")), s.rope_freq_base);
  if (s.head_dim != 0 && s.head_dim != s.n_embd / s.n_head) {
    EXPECT_EQ(f.get_uint(a + ".attention.key_length"), uint64_t(s.head_dim));
    EXPECT_EQ(f.get_uint(a + ".attention.value_length"), uint64_t(s.head_dim));
  } else {
    EXPECT_EQ(f.find(a + ".attention.key_length"), nullptr);
  }
  if (s.yarn_factor > 0) {
    EXPECT_EQ(f.get_string(a + ".rope.scaling.type"), "yarn");
    EXPECT_FLOAT_EQ(float(f.get_float(a + ".rope.scaling.factor")), s.yarn_factor);
    EXPECT_EQ(f.get_uint(a + ".rope.scaling.original_context_length"), uint64_t(s.yarn_orig_ctx));
  } else if (s.rope_scale_linear != 1.0f) {
    EXPECT_EQ(f.get_string(a + ".rope.scaling.type"), "linear");
    EXPECT_FLOAT_EQ(float(f.get_float(a + ".rope.scaling.factor")), s.rope_scale_linear);
  } else {
    EXPECT_EQ(f.find(a + ".rope.scaling.type"), nullptr);
  }
  // Gemma / Phi-3 keys, written only when set (llama.cpp's defaults apply otherwise).
  auto uint_or_absent = [&](const std::string& key, int v) {
    if (v > 0) {
      EXPECT_EQ(f.get_uint(key), uint64_t(v)) << key;
    } else {
      EXPECT_EQ(f.find(key), nullptr) << key;
    }
  };
  uint_or_absent(a + ".attention.sliding_window", s.sliding_window);
  uint_or_absent(a + ".attention.sliding_window_pattern", s.swa_pattern);
  if (s.attn_softcap > 0) { EXPECT_FLOAT_EQ(float(f.get_float(a + ".attn_logit_softcapping")), s.attn_softcap); }
  if (s.final_softcap > 0) { EXPECT_FLOAT_EQ(float(f.get_float(a + ".final_logit_softcapping")), s.final_softcap); }
  if (!s.longrope.empty()) {
    EXPECT_EQ(f.get_uint(a + ".rope.scaling.original_context_length"), uint64_t(s.longrope_orig_ctx));
    const double scale = double(s.n_ctx) / s.longrope_orig_ctx;
    EXPECT_NEAR(f.get_float(a + ".rope.scaling.attn_factor"),
                std::sqrt(1.0 + std::log(scale) / std::log(double(s.longrope_orig_ctx))), 1e-6);
  }
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), s.tokenizer);
  const auto& tokens = f.find("tokenizer.ggml.tokens")->as_array("tokens", ValueType::STRING);
  EXPECT_EQ(tokens.size(), size_t(s.n_vocab));
  EXPECT_EQ(f.find("tokenizer.ggml.token_type")->as_array("types", ValueType::INT32).size(),
            size_t(s.n_vocab));
  EXPECT_LT(f.get_uint("tokenizer.ggml.bos_token_id"), uint64_t(s.n_vocab));
  EXPECT_LT(f.get_uint("tokenizer.ggml.eos_token_id"), uint64_t(s.n_vocab));
  EXPECT_TRUE(f.get_bool("tokenizer.ggml.add_bos_token"));
  if (s.tokenizer == "gpt2") {
    EXPECT_NE(f.find("tokenizer.ggml.merges"), nullptr);
    EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), a.starts_with("qwen") ? "qwen2" : "llama-bpe");
  } else {
    EXPECT_EQ(f.find("tokenizer.ggml.scores")->as_array("scores", ValueType::FLOAT32).size(),
              size_t(s.n_vocab));
    EXPECT_EQ(f.get_uint("tokenizer.ggml.unknown_token_id"), 0u);
  }
}

TEST(GenModel, SameSeedGivesIdenticalBytes) {
  TempDir dir;
  ModelSpec s = preset("tiny-qwen2");
  write_model(s, dir.file("a.gguf"));
  write_model(s, dir.file("b.gguf"));
  const auto a = gguf::testing::read_bytes(dir.file("a.gguf"));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, gguf::testing::read_bytes(dir.file("b.gguf")));
  s.seed = 2;
  write_model(s, dir.file("c.gguf"));
  const auto c = gguf::testing::read_bytes(dir.file("c.gguf"));
  EXPECT_EQ(a.size(), c.size());
  EXPECT_NE(a, c);
}

TEST(GenModel, EveryPresetParsesWithTheConventionalTensors) {
  TempDir dir;
  for (std::string_view name : preset_names()) {
    SCOPED_TRACE(std::string(name));
    const ModelSpec s = preset(name);
    const std::string path = dir.file(std::string(name) + ".gguf");
    write_model(s, path);
    const File f = File::open(path);
    check_model(s, f);
  }
}

TEST(GenModel, EveryArchTokenizerAndOption) {
  TempDir dir;
  for (const char* arch : {"llama", "qwen2", "qwen3"}) {
    for (const char* tok : {"gpt2", "llama"}) {
      for (bool tied : {false, true}) {
        ModelSpec s;
        s.arch = arch;
        s.tokenizer = tok;
        s.tied_output = tied;
        s.n_layer = 1;
        s.n_vocab = 300;
        s.head_dim = std::string(arch) == "qwen3" ? 8 : 0;
        s.rope_scale_linear = tied ? 4.0f : 1.0f;
        s.weight_type = tied ? quant::Type::F16 : quant::Type::F32;
        SCOPED_TRACE(std::string(arch) + "/" + tok + (tied ? "/tied" : ""));
        const std::string path = dir.file("m.gguf");
        write_model(s, path);
        check_model(s, File::open(path));
      }
    }
  }
}

TEST(GenModel, GemmaPhi3AndYarnOptions) {
  TempDir dir;
  ModelSpec g = preset("tiny-gemma3");
  g.tied_output = false;
  g.final_softcap = 7.0f;
  g.swa_pattern = 0;
  ModelSpec p = preset("tiny-phi3");
  p.fused_qkv = false;
  p.n_rot = 8;
  ModelSpec y = preset("tiny-qwen2");
  y.yarn_factor = 4.0f;
  y.yarn_orig_ctx = 64;
  int i = 0;
  for (const ModelSpec& s : {g, p, y}) {
    SCOPED_TRACE(s.arch);
    const std::string path = dir.file("m" + std::to_string(i++) + ".gguf");
    write_model(s, path);
    check_model(s, File::open(path));
  }
  ModelSpec bad = y;
  bad.rope_scale_linear = 2.0f;  // two scalings at once
  EXPECT_THROW(validate(bad), Error);
  bad = preset("tiny-llama");
  bad.longrope = "random";  // phi3 only
  EXPECT_THROW(validate(bad), Error);
}

TEST(GenModel, DefaultPresetIsAFewMegabytesOfQ8) {
  TempDir dir;
  const ModelSpec s = preset("default");
  EXPECT_EQ(s.n_vocab, 1024);
  EXPECT_EQ(s.n_embd, 128);
  EXPECT_EQ(s.n_layer, 4);
  EXPECT_EQ(s.tokenizer, "gpt2");
  EXPECT_EQ(s.weight_type, quant::Type::Q8_0);
  write_model(s, dir.file("d.gguf"));
  const auto size = std::filesystem::file_size(dir.file("d.gguf"));
  EXPECT_GT(size, 1000000u);
  EXPECT_LT(size, 8000000u);
}

TEST(GenModel, WeightStatisticsFollowTheSpec) {
  TempDir dir;
  ModelSpec s;
  write_model(s, dir.file("w.gguf"));
  const File f = File::open(dir.file("w.gguf"));
  auto stats = [&](const char* name) {
    const gguf::TensorInfo& t = f.tensor(name);
    const float* p = reinterpret_cast<const float*>(t.data);
    double sum = 0, sq = 0;
    for (uint64_t i = 0; i < t.n_elements; ++i) {
      sum += p[i];
      sq += double(p[i]) * p[i];
    }
    const double mean = sum / double(t.n_elements);
    return std::pair<double, double>(mean, std::sqrt(sq / double(t.n_elements) - mean * mean));
  };
  auto [m_q, s_q] = stats("blk.0.attn_q.weight");
  EXPECT_NEAR(m_q, 0.0, 0.01);
  EXPECT_NEAR(s_q, 1.0 / std::sqrt(64.0), 0.01);
  auto [m_d, s_d] = stats("blk.1.ffn_down.weight");
  EXPECT_NEAR(s_d, 1.0 / std::sqrt(128.0), 0.01);
  auto [m_n, s_n] = stats("output_norm.weight");
  EXPECT_NEAR(m_n, 1.0, 0.05);
  auto [m_o, s_o] = stats("output.weight");
  EXPECT_NEAR(s_o, 2.0 / 8.0, 0.02);
  // Different tensors hold different values.
  EXPECT_NE(std::memcmp(f.tensor("blk.0.attn_q.weight").data, f.tensor("blk.1.attn_q.weight").data, 64), 0);

  s.weight_std = 0.5f;
  write_model(s, dir.file("x.gguf"));
  const File g = File::open(dir.file("x.gguf"));
  const float* p = reinterpret_cast<const float*>(g.tensor("blk.0.ffn_up.weight").data);
  double sq = 0;
  const uint64_t n = g.tensor("blk.0.ffn_up.weight").n_elements;
  for (uint64_t i = 0; i < n; ++i) sq += double(p[i]) * p[i];
  EXPECT_NEAR(std::sqrt(sq / double(n)), 0.5, 0.02);
}

// Draft models for speculative decoding: --noise perturbs the 2-D weights only, by noise_std of their
// standard deviation; --layer-scale scales attn_output and ffn_down from a layer on; a model with
// fewer layers and the same seed has exactly the first layers' tensors.
TEST(GenModel, NoiseAndLayerScaleMakeDrafts) {
  TempDir dir;
  ModelSpec s;
  s.n_layer = 3;
  write_model(s, dir.file("base.gguf"));
  ModelSpec noisy = s;
  noisy.noise_std = 0.1f;
  write_model(noisy, dir.file("noisy.gguf"));
  ModelSpec scaled = s;
  scaled.scale_layers_from = 1;
  scaled.layer_scale = 0.25f;
  write_model(scaled, dir.file("scaled.gguf"));
  ModelSpec short_ = s;
  short_.n_layer = 1;
  write_model(short_, dir.file("short.gguf"));
  const File b = File::open(dir.file("base.gguf")), n = File::open(dir.file("noisy.gguf")),
             c = File::open(dir.file("scaled.gguf")), h = File::open(dir.file("short.gguf"));
  const auto data = [](const File& f, const char* name) {
    const gguf::TensorInfo& t = f.tensor(name);
    const float* p = reinterpret_cast<const float*>(t.data);
    return std::vector<float>(p, p + t.n_elements);
  };
  // Noise: norms untouched; a matmul weight moved by ≈ 0.1 × its std (uniform noise: rms 0.1 · std).
  EXPECT_EQ(data(b, "blk.0.attn_norm.weight"), data(n, "blk.0.attn_norm.weight"));
  const std::vector<float> w0 = data(b, "blk.0.attn_q.weight"), w1 = data(n, "blk.0.attn_q.weight");
  double d2 = 0;
  for (size_t i = 0; i < w0.size(); ++i) d2 += double(w1[i] - w0[i]) * (w1[i] - w0[i]);
  EXPECT_NEAR(std::sqrt(d2 / double(w0.size())), 0.1 / std::sqrt(64.0), 0.002);
  EXPECT_NE(data(b, "token_embd.weight"), data(n, "token_embd.weight"));
  EXPECT_NE(data(b, "output.weight"), data(n, "output.weight"));
  // Layer scale: layer 0 untouched, layers 1 and 2's attn_output and ffn_down × 0.25, the rest equal.
  EXPECT_EQ(data(b, "blk.0.ffn_down.weight"), data(c, "blk.0.ffn_down.weight"));
  EXPECT_EQ(data(b, "blk.2.ffn_up.weight"), data(c, "blk.2.ffn_up.weight"));
  for (const char* name : {"blk.1.attn_output.weight", "blk.2.ffn_down.weight"}) {
    const std::vector<float> x = data(b, name), y = data(c, name);
    for (size_t i = 0; i < x.size(); i += 97) ASSERT_EQ(y[i], x[i] * 0.25f) << name << " " << i;
  }
  // Fewer layers: the same tensors as the first layers.
  for (const char* name : {"token_embd.weight", "output.weight", "blk.0.attn_k.weight", "blk.0.ffn_down.weight"})
    EXPECT_EQ(data(b, name), data(h, name)) << name;
  ModelSpec bad = s;
  bad.noise_std = -1.0f;
  EXPECT_THROW(write_model(bad, dir.file("bad.gguf")), Error);
  bad = s;
  bad.layer_scale = INFINITY;
  EXPECT_THROW(write_model(bad, dir.file("bad.gguf")), Error);
}

TEST(GenModel, RejectsBadSpecs) {
  TempDir dir;
  auto expect_error = [&](const ModelSpec& s, const std::string& needle) {
    try {
      write_model(s, dir.file("bad.gguf"));
      ADD_FAILURE() << "no error; wanted " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(dir.file("bad.gguf")));
  };
  ModelSpec k;
  k.weight_type = quant::Type::Q4_K;  // n_embd 64 is not a multiple of 256
  expect_error(k, "multiples of 256");
  ModelSpec a;
  a.arch = "gpt-j";
  expect_error(a, "unknown arch 'gpt-j'");
  ModelSpec t;
  t.tokenizer = "wordpiece";
  expect_error(t, "unknown tokenizer 'wordpiece'");
  ModelSpec h;
  h.n_head_kv = 3;
  expect_error(h, "n_head_kv");
  ModelSpec z;
  z.n_layer = 0;
  expect_error(z, "n_layer");
  ModelSpec v;
  v.n_vocab = 100;
  expect_error(v, "n_vocab");
  try {
    preset("huge");
    FAIL();
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'huge'"), std::string::npos);
    for (std::string_view n : preset_names()) EXPECT_NE(msg.find(n), std::string::npos) << n;
  }
}

// Checks the invariants every vocabulary must hold.
void check_vocab(const Vocab& v, int n_vocab) {
  ASSERT_EQ(v.tokens.size(), size_t(n_vocab));
  ASSERT_EQ(v.types.size(), size_t(n_vocab));
  std::map<std::string, int> ids;
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    EXPECT_FALSE(v.tokens[i].empty()) << i;
    EXPECT_TRUE(ids.emplace(v.tokens[i], int(i)).second) << "duplicate token " << v.tokens[i];
    EXPECT_TRUE(v.types[i] == kTokenNormal || v.types[i] == kTokenUnknown ||
                v.types[i] == kTokenControl || v.types[i] == kTokenByte)
        << i;
  }
  ASSERT_GE(v.bos, 0);
  ASSERT_GE(v.eos, 0);
  EXPECT_EQ(v.types[size_t(v.bos)], kTokenControl);
  EXPECT_EQ(v.types[size_t(v.eos)], kTokenControl);
  std::set<std::string> merges;
  for (const std::string& m : v.merges) {
    EXPECT_TRUE(merges.insert(m).second) << "duplicate merge " << m;
    const size_t sp = m.find(' ');
    ASSERT_NE(sp, std::string::npos) << m;
    EXPECT_EQ(m.find(' ', sp + 1), std::string::npos) << m;
    const std::string l = m.substr(0, sp), r = m.substr(sp + 1);
    EXPECT_TRUE(ids.count(l)) << "merge '" << m << "': left is not a token";
    EXPECT_TRUE(ids.count(r)) << "merge '" << m << "': right is not a token";
    EXPECT_TRUE(ids.count(l + r)) << "merge '" << m << "': result is not a token";
  }
}

TEST(GenVocab, Gpt2IsValidByteLevelBpe) {
  const Vocab v = make_vocab("gpt2", 1024);
  check_vocab(v, 1024);
  EXPECT_EQ(v.model, "gpt2");
  EXPECT_TRUE(v.scores.empty());
  EXPECT_EQ(v.tokens[size_t(v.bos)], "<|begin_of_text|>");
  EXPECT_EQ(v.tokens[size_t(v.eos)], "<|end_of_text|>");
  EXPECT_EQ(v.bos, 1022);
  EXPECT_EQ(v.eos, 1023);
  // The byte map: printable ASCII is itself, space is 'Ġ' (U+0120), newline 'Ċ' (U+010A).
  EXPECT_EQ(v.tokens[size_t('a')], "a");
  EXPECT_EQ(v.tokens[32], "\xC4\xA0");
  EXPECT_EQ(v.tokens[10], "\xC4\x8A");
  EXPECT_EQ(v.tokens[0], "\xC4\x80");
  std::set<std::string> bytes(v.tokens.begin(), v.tokens.begin() + 256);
  EXPECT_EQ(bytes.size(), 256u);
  // The corpus is large enough that the default vocabulary is all learned merges.
  EXPECT_EQ(v.merges.size() >= 1024 - 258, true);
  for (int i = 256; i < 1022; ++i) EXPECT_EQ(v.types[size_t(i)], kTokenNormal) << v.tokens[size_t(i)];
  // Common words with their leading space became single tokens.
  const std::set<std::string> all(v.tokens.begin(), v.tokens.end());
  EXPECT_TRUE(all.count("\xC4\xA0" "the"));
  EXPECT_TRUE(all.count("\xC4\xA0" "and"));
  // No token has a raw space (spaces are mapped), so "l r" merges are unambiguous.
  for (const std::string& t : v.tokens) {
    if (t[0] != '<') {
      EXPECT_EQ(t.find(' '), std::string::npos) << t;
    }
  }
}

TEST(GenVocab, LlamaIsValidSentencePiece) {
  const Vocab v = make_vocab("llama", 512);
  check_vocab(v, 512);
  EXPECT_EQ(v.model, "llama");
  ASSERT_EQ(v.scores.size(), 512u);
  EXPECT_TRUE(v.merges.empty());
  EXPECT_EQ(v.tokens[0], "<unk>");
  EXPECT_EQ(v.types[0], kTokenUnknown);
  EXPECT_EQ(v.unk, 0);
  EXPECT_EQ(v.tokens[1], "<s>");
  EXPECT_EQ(v.tokens[2], "</s>");
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.tokens[3], "<0x00>");
  EXPECT_EQ(v.tokens[3 + 0x0A], "<0x0A>");
  EXPECT_EQ(v.tokens[258], "<0xFF>");
  for (int i = 3; i < 259; ++i) EXPECT_EQ(v.types[size_t(i)], kTokenByte);
  const std::string sp = "\xE2\x96\x81";
  std::map<std::string, float> score;
  for (size_t i = 259; i < v.tokens.size(); ++i) {
    EXPECT_EQ(v.types[i], kTokenNormal) << v.tokens[i];
    EXPECT_EQ(v.tokens[i].find(' '), std::string::npos) << v.tokens[i];
    score[v.tokens[i]] = v.scores[i];
  }
  ASSERT_TRUE(score.count(sp + "the"));
  ASSERT_TRUE(score.count(sp));
  ASSERT_TRUE(score.count("e"));
  // Every multi-character piece can be built from two shorter pieces, and learned pieces score
  // above single characters.
  EXPECT_GT(score[sp + "the"], score["e"]);
  std::set<float> scores;
  for (const auto& [t, s] : score) scores.insert(s);
  EXPECT_EQ(scores.size(), score.size()) << "scores are not distinct ranks";
}

TEST(GenVocab, SmallAndLargeSizesAreFilled) {
  check_vocab(make_vocab("gpt2", 258), 258);
  check_vocab(make_vocab("llama", 260), 260);
  const Vocab big = make_vocab("gpt2", 8000);  // more than the corpus can teach: reserved tokens
  check_vocab(big, 8000);
  EXPECT_EQ(big.types[7000], kTokenControl);
  EXPECT_THROW(make_vocab("gpt2", 257), Error);
  EXPECT_THROW(make_vocab("bert", 1000), Error);
}

TEST(GenVocab, SplitWordsRoundTrips) {
  const std::string text = "Hello, world! It's 2048 bytes.\n\nThe  end";
  const std::vector<std::string> words = split_words(text);
  std::string joined;
  for (const std::string& w : words) joined += w;
  EXPECT_EQ(joined, text);
  EXPECT_EQ(words[0], "Hello");
  EXPECT_EQ(words[1], ",");
  EXPECT_EQ(words[2], " world");
  std::string all;
  for (const std::string& w : split_words(corpus_text())) all += w;
  EXPECT_EQ(all, corpus_text());
  EXPECT_GT(corpus_text().size(), 4000u);
}

// The command: exit status 2 and one line for bad flags (runs when the binary has been built).
TEST(GenModelCli, BadFlagsExitWithStatus2) {
  const std::string bin = ork::testing::binary_dir() + "/ork-gen-model";
  if (!std::filesystem::exists(bin)) GTEST_SKIP() << bin << " not built";
  TempDir dir;
  auto status = [&](const std::string& args) {
    const int rc = std::system((bin + " " + args + " 2>" + dir.file("err.txt")).c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  EXPECT_EQ(status("--bogus -o " + dir.file("x.gguf")), 2);
  EXPECT_EQ(status("--preset nope -o " + dir.file("x.gguf")), 2);
  EXPECT_EQ(status("--layers zero -o " + dir.file("x.gguf")), 2);
  EXPECT_EQ(status("--preset tiny-llama"), 2);
  const auto err = gguf::testing::read_bytes(dir.file("err.txt"));
  EXPECT_EQ(std::string(err.begin(), err.end()).rfind("ork-gen-model: ", 0), 0u);
  EXPECT_EQ(status("--preset tiny-llama --layers 1 --type f16 --tied -o " + dir.file("y.gguf")), 0);
  const File f = File::open(dir.file("y.gguf"));
  EXPECT_EQ(f.get_uint("llama.block_count"), 1u);
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);
  EXPECT_EQ(f.tensor("blk.0.attn_q.weight").type, quant::Type::F16);
}

}  // namespace
}  // namespace ork::gen
