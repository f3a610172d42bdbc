#include "speculative_flags.h"

#include "core/error.h"
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

std::unique_ptr<runtime::Engine> load_draft(const Args& args, runtime::EngineOptions& target) {
  if (!args.has("--draft") || args.has("--lookup")) return nullptr;  // --lookup too: speculative_setup says so
  runtime::EngineOptions eo = target;
  eo.model_path = *args.get("--draft");
  const std::string target_device = runtime::resolve_device(target);
  eo.device = args.get_or("--draft-device", target_device);
  if (eo.device != "cpu" && eo.device != "npu" && eo.device != "sim") {
    throw UsageError{"--draft-device: '" + eo.device + "' is not one of cpu, npu, sim"};
  }
  eo.npu.kind = eo.device;
  eo.persist_path.clear();  // the target's .orkpack is not the draft's
  eo.weight_mem.clear();
  eo.scratch_mem.clear();
  eo.share_weights_with = nullptr;
  eo.share_scratch_with = nullptr;
  const bool beside = eo.device != "cpu" && eo.device == target_device;
  std::unique_ptr<runtime::Engine> draft;
  try {
    if (eo.device != "cpu") {
      // A draft streams its weights once per drafted token: only a resident one pays. Say so with the numbers.
      eo.residency = weights::Residency::kAuto;
      const runtime::MemoryPlan mp = runtime::plan_memory(eo, 1);
      if (mp.mode != "resident") {
        throw Error(str_cat(eo.model_path, " cannot be resident on ", mp.device, " (", mp.reason, "; ",
                            mp.model_file_bytes, " bytes of weights in the file, IOVA window ",
                            mp.window_capacity_bytes >> 20,
                            " MiB per domain): a draft must be resident — give a smaller draft or --draft-device cpu"));
      }
      eo.residency = weights::Residency::kResident;
    }
    draft = std::make_unique<runtime::Engine>(eo);
  } catch (const Error& e) {
    throw Error(std::string("--draft: ") + e.what());
  }
  if (beside) target.share_scratch_with = draft.get();
  return draft;
}

SpeculativeSetup speculative_setup(const Args& args, runtime::Engine& target, runtime::Engine* draft,
                                   int64_t n_ctx, const runtime::SamplerParams& sp) {
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
  if (draft == nullptr) return s;
  runtime::check_draft_vocab(target.model(), draft->model());
  s.draft_engine = draft;
  s.source = std::make_unique<runtime::DraftModel>(*draft, n_ctx, sp, p_min);
  return s;
}

}  // namespace ork::cli
