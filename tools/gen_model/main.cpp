// ork-gen-model: writes a deterministic random-weight GGUF model (see gen_model.h).
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/error.h"
#include "gen_model/gen_model.h"
#include "gen_model/outlier_variant.h"
#include "gen_model/requant_variant.h"
#include "gguf/file.h"
#include "quant/types.h"

namespace {

constexpr const char* kUsage =
    "usage: ork-gen-model [--preset NAME] [--arch llama|qwen2|qwen3|gemma2|gemma3|phi3|qwen2moe|qwen3moe] [--type f32|f16|q8_0|...]\n"
    "                     [--vocab N] [--embd N] [--layers N] [--heads N] [--kv-heads N] [--ff N]\n"
    "                     [--ctx N] [--head-dim N] [--tokenizer gpt2|llama] [--pre NAME] [--tied|--untied]\n"
    "                     [--rope-freqs none|llama3|random] [--seed S] [--rot N] [--window N]\n"
    "                     [--swa-pattern N] [--longrope-orig N] [--yarn-factor F --yarn-orig N]\n"
    "                     [--noise F] [--noise-seed S] [--layer-scale S --scale-layers-from L]\n"
    "                     [--experts N --experts-used K [--ff-exp N] [--ff-shexp N] [--routing-skew S]] -o PATH\n"
    "--experts / --experts-used: a mixture of experts (--arch llama = Mixtral-style, qwen2moe, qwen3moe);\n"
    "--ff-exp / --ff-shexp: expert and shared-expert widths (qwen*moe); --routing-skew S > 0: the router\n"
    "prefers a few experts per layer (the expert of rank r gains about S * 2^-r in logit).\n"
    "--window / --swa-pattern: gemma's sliding window and its period; --longrope-orig: phi3's\n"
    "LongRoPE factors with that original context; --rot: rotated dims per head.\n"
    "--noise F adds uniform noise of F x each 2-D weight's standard deviation, drawn from --noise-seed\n"
    "(default 1): the same model perturbed, e.g. a draft for speculative decoding.\n"
    "--layer-scale S --scale-layers-from L multiplies attn_output and ffn_down of layers >= L by S.\n"    "--rope-freqs writes rope_freqs.weight: llama3 = Llama 3.1's factors (factor 8, low 1, high 4,\n"
    "original context 8192), random = seeded factors in [1/8, 8].\n"
    "Presets: default, tiny-llama, tiny-qwen2, tiny-qwen3, tiny-spm, tiny-q4k, tiny-gemma2, tiny-gemma3,\n"
    "tiny-phi3, tiny-mixtral, tiny-qwen2moe, tiny-qwen3moe. Flags override the preset (default: \"default\").\n"
    "   or: ork-gen-model --outliers-of IN.gguf --outlier-scale S -o PATH\n"
    "writes IN with 4 outlier channels: their RMSNorm weights times S, the matching input columns of\n"
    "the linears each norm feeds divided by S (the same float function; gen_model/outlier_variant.h).\n"
    "   or: ork-gen-model --requant-of IN.gguf --type TYPE -o PATH\n"
    "writes IN with every 2-D tensor requantized to TYPE by ork's reference quantizer\n"
    "(gen_model/requant_variant.h), e.g. a Q4_0 copy of a model.\n";

struct Usage {
  std::string message;
};

ork::quant::Type parse_type(const std::string& text) {
  std::string known;
  for (uint32_t id = 0; id < 64; ++id) {
    if (!ork::quant::is_supported(id)) continue;
    const std::string_view name = ork::quant::traits(ork::quant::Type(id)).name;
    if (name.size() == text.size()) {
      bool same = true;
      for (size_t k = 0; k < name.size(); ++k) {
        same = same && std::tolower(uint8_t(name[k])) == std::tolower(uint8_t(text[k]));
      }
      if (same) return ork::quant::Type(id);
    }
    known += (known.empty() ? "" : ", ") + std::string(name);
  }
  throw Usage{"--type: unknown type '" + text + "' (known: " + known + ")"};
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // The preset first, so that the other flags override it wherever they appear.
  std::string preset = "default";
  for (size_t k = 0; k < args.size(); ++k) {
    if (args[k] == "--preset") {
      if (k + 1 >= args.size()) throw Usage{"--preset needs a value"};
      preset = args[k + 1];
    }
  }
  ork::gen::ModelSpec spec;
  try {
    spec = ork::gen::preset(preset);
  } catch (const ork::Error& e) {
    throw Usage{e.what()};
  }
  std::string out, outliers_of, requant_of;
  bool type_given = false;
  double outlier_scale = 0;
  for (size_t k = 0; k < args.size(); ++k) {
    const std::string& a = args[k];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--tied" || a == "--untied") {
      spec.tied_output = a == "--tied";
      continue;
    }
    if (a.empty() || a[0] != '-') throw Usage{"unexpected argument '" + a + "'"};
    static const char* const kValueFlags[] = {
        "--preset", "-o",      "--output",   "--arch",    "--type",     "--vocab",
        "--embd",   "--layers", "--heads",   "--kv-heads", "--ff",      "--ctx",
        "--head-dim", "--tokenizer", "--pre", "--seed", "--rope-freqs", "--rot", "--window",
        "--swa-pattern", "--longrope-orig", "--yarn-factor", "--yarn-orig", "--outliers-of", "--outlier-scale", "--requant-of",
        "--noise", "--noise-seed", "--layer-scale", "--scale-layers-from", "--experts", "--experts-used",
        "--ff-exp", "--ff-shexp", "--routing-skew"};
    bool known = false;
    for (const char* f : kValueFlags) known = known || a == f;
    if (!known) throw Usage{"unknown flag '" + a + "' (see --help)"};
    if (k + 1 >= args.size()) throw Usage{a + " needs a value"};
    const std::string& v = args[++k];
    auto count = [&](int max) {
      try {
        return int(ork::parse_int(v, a.c_str(), 1, max));
      } catch (const ork::Error& e) {
        throw Usage{e.what()};
      }
    };
    if (a == "--preset") {
      // applied above
    } else if (a == "-o" || a == "--output") {
      out = v;
    } else if (a == "--arch") {
      spec.arch = v;
    } else if (a == "--type") {
      spec.weight_type = parse_type(v);
      type_given = true;
    } else if (a == "--vocab") {
      spec.n_vocab = count(1 << 20);
    } else if (a == "--embd") {
      spec.n_embd = count(1 << 16);
    } else if (a == "--layers") {
      spec.n_layer = count(1024);
    } else if (a == "--heads") {
      spec.n_head = count(1024);
    } else if (a == "--kv-heads") {
      spec.n_head_kv = count(1024);
    } else if (a == "--ff") {
      spec.n_ff = count(1 << 18);
    } else if (a == "--ctx") {
      spec.n_ctx = count(1 << 24);
    } else if (a == "--head-dim") {
      spec.head_dim = count(1 << 12);
    } else if (a == "--tokenizer") {
      spec.tokenizer = v;
    } else if (a == "--pre") {
      spec.pre = v;
    } else if (a == "--rot") {
      spec.n_rot = count(1 << 12);
    } else if (a == "--window") {
      spec.sliding_window = count(1 << 24);
    } else if (a == "--swa-pattern") {
      spec.swa_pattern = count(4096);
    } else if (a == "--longrope-orig") {
      spec.longrope = "random";
      spec.longrope_orig_ctx = count(1 << 24);
    } else if (a == "--yarn-factor") {
      try {
        spec.yarn_factor = float(std::stod(v));
      } catch (const std::exception&) {
        throw Usage{"--yarn-factor: '" + v + "' is not a number"};
      }
    } else if (a == "--yarn-orig") {
      spec.yarn_orig_ctx = count(1 << 24);
    } else if (a == "--rope-freqs") {
      spec.rope_freqs = v == "none" ? "" : v;  // validate() names an unknown value
    } else if (a == "--outliers-of") {
      outliers_of = v;
    } else if (a == "--requant-of") {
      requant_of = v;
    } else if (a == "--outlier-scale") {
      char* end = nullptr;
      outlier_scale = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(outlier_scale > 0) || !std::isfinite(outlier_scale))
        throw Usage{"--outlier-scale: '" + v + "' is not a finite number > 0"};
    } else if (a == "--noise") {
      char* end = nullptr;
      const float f = std::strtof(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(f >= 0.0f) || !std::isfinite(f)) {
        throw Usage{"--noise: '" + v + "' is not a finite number >= 0"};
      }
      spec.noise_std = f;
    } else if (a == "--layer-scale") {
      char* end = nullptr;
      const float f = std::strtof(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !std::isfinite(f)) {
        throw Usage{"--layer-scale: '" + v + "' is not a finite number"};
      }
      spec.layer_scale = f;
    } else if (a == "--experts") {
      spec.n_expert = count(1024);
    } else if (a == "--experts-used") {
      spec.n_expert_used = count(1024);
    } else if (a == "--ff-exp") {
      spec.n_ff_exp = count(1 << 18);
    } else if (a == "--ff-shexp") {
      spec.n_ff_shexp = count(1 << 18);
    } else if (a == "--routing-skew") {
      char* end = nullptr;
      const float f = std::strtof(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(f >= 0.0f) || !std::isfinite(f)) {
        throw Usage{"--routing-skew: '" + v + "' is not a finite number >= 0"};
      }
      spec.routing_skew = f;
    } else if (a == "--scale-layers-from") {
      spec.scale_layers_from = count(1024);
    } else if (a == "--noise-seed") {
      try {
        spec.noise_seed = uint64_t(ork::parse_int(v, "--noise-seed", 0, INT64_MAX));
      } catch (const ork::Error& e) {
        throw Usage{e.what()};
      }
    } else if (a == "--seed") {
      try {
        spec.seed = uint64_t(ork::parse_int(v, "--seed", 0, INT64_MAX));
      } catch (const ork::Error& e) {
        throw Usage{e.what()};
      }
    }
  }
  if (out.empty()) throw Usage{"missing -o PATH"};
  if (outliers_of.empty() != (outlier_scale == 0))
    throw Usage{"--outliers-of and --outlier-scale go together"};
  if (!requant_of.empty()) {
    if (!outliers_of.empty()) throw Usage{"--requant-of and --outliers-of exclude each other"};
    if (!type_given) throw Usage{"--requant-of needs --type"};
    ork::gen::write_requant_variant(requant_of, out, spec.weight_type);
    return 0;
  }
  if (!outliers_of.empty()) {
    const ork::gguf::File in = ork::gguf::File::open(outliers_of);
    const int64_t n_embd = int64_t(in.tensor("output_norm.weight").n_elements);
    ork::gen::write_outlier_variant(outliers_of, out, float(outlier_scale),
                                    ork::gen::default_outlier_channels(n_embd));
    return 0;
  }
  try {
    ork::gen::validate(spec);
  } catch (const ork::Error& e) {
    throw Usage{e.what()};
  }
  ork::gen::write_model(spec, out);  // I/O errors: exit status 1
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Usage& u) {
    std::fprintf(stderr, "ork-gen-model: %s\n", u.message.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ork-gen-model: %s\n", e.what());
    return 1;
  }
}
