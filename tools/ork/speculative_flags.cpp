#include "speculative_flags.h"

#include "runtime/draft_model.h"
#include "runtime/prompt_lookup.h"

namespace ork::cli {

const std::vector<OptionSpec> kSpeculativeOptions = {
    {{"--draft"}, true, "draft model (GGUF, same tokenizer) for speculative decoding"},
    {{"--draft-device"}, true, "device of the draft: cpu | npu | sim (default: the target's)"},
    {{"--draft-max"}, true, "tokens drafted per target pass (default 8)"},
    {{"--draft-min"}, true, "drafts shorter than this are not verified (default 0)"},
    {{"--draft-p-min"}, true, "stop drafting at a draft probability below this (default 0.0)"},
    {{"--lookup"}, true, "draft by n-gram lookup in the context, n-grams of up to N tokens (no draft model)"},
};

bool wants_speculative(const Args& args) { return args.has("--draft") || args.has("--lookup"); }

SpeculativeSetup speculative_setup(const Args& args, runtime::Engine& target, int64_t n_ctx,
                                   const runtime::SamplerParams& sp) {
  SpeculativeSetup s;
  s.options.draft_max = args.get_int("--draft-max", 8, 1, 256);
  s.options.draft_min = args.get_int("--draft-min", 0, 0, 256);
  if (s.options.draft_min > s.options.draft_max) {
    throw UsageError{"--draft-min " + std::to_string(s.options.draft_min) + " exceeds --draft-max " +
                     std::to_string(s.options.draft_max)};
  }
  const float p_min = float(args.get_double("--draft-p-min", 0.0, 0.0, 1.0));
  if (args.has("--draft") && args.has("--lookup")) throw UsageError{"give one of --draft and --lookup"};
  if (args.has("--lookup")) {
    s.source = std::make_unique<runtime::PromptLookup>(args.get_int("--lookup", 3, 1, 64));
    return s;
  }
  if (!args.has("--draft")) return s;
  runtime::EngineOptions eo = target.options();
  eo.model_path = *args.get("--draft");
  const std::string target_device = target.plan() != nullptr ? target.device_name() : "cpu";
  eo.device = args.get_or("--draft-device", target_device);
  if (eo.device != "cpu" && eo.device != "npu" && eo.device != "sim") {
    throw UsageError{"--draft-device: '" + eo.device + "' is not one of cpu, npu, sim"};
  }
  eo.npu.kind = eo.device;
  eo.persist_path.clear();  // the target's .orkpack is not the draft's
  eo.weight_mem.clear();
  eo.scratch_mem.clear();
  eo.share_weights_with = nullptr;
  eo.share_scratch_with = eo.device != "cpu" && eo.device == target_device ? &target : nullptr;
  try {
    s.draft_engine = std::make_unique<runtime::Engine>(eo);
  } catch (const Error& e) {
    throw Error(std::string("--draft: ") + e.what());
  }
  runtime::check_draft_vocab(target.model(), s.draft_engine->model());
  s.source = std::make_unique<runtime::DraftModel>(*s.draft_engine, n_ctx, sp, p_min);
  return s;
}

}  // namespace ork::cli
