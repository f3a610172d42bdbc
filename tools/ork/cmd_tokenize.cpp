// ork tokenize — print the token ids of a text, as llama.cpp's tokenize tool does.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "device_flags.h"
#include "core/error.h"
#include "core/json.h"
#include "model/model.h"

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kTokenizeOptions = {
    {{"-m", "--model"}, true, "GGUF model file (default: the embedded default model)"},
    {{"-p", "--prompt"}, true, "text to tokenize"},
    {{"-f", "--file"}, true, "file whose text to tokenize"},
    {{"--special"}, false, "parse special-token text (e.g. <|end_of_text|>) as those tokens"},
    {{"--bos"}, false, "add the BOS token"},
    {{"--ids"}, false, "print only the ids, as a list [1, 2, 3]"},
    {{"--tokenizer-pre"}, true, "pre-tokenizer to use instead of the file's tokenizer.ggml.pre (e.g. gpt2)"},
    {{"--json"}, false, "print {\"tokens\":[...]}"},
    {{"-h", "--help"}, false, "this help"},
};

}  // namespace

int cmd_tokenize(const std::vector<std::string>& argv) {
  const Args args("tokenize", kTokenizeOptions, argv);
  if (args.has("--help")) {
    std::printf("usage: ork tokenize [-m MODEL] (-p TEXT | -f FILE) [options]\n\n%s",
                format_options(kTokenizeOptions).c_str());
    return 0;
  }
  if (args.has("--prompt") == args.has("--file")) {
    throw UsageError{"give exactly one of -p/--prompt and -f/--file"};
  }
  const std::string text = args.has("--prompt") ? *args.get("--prompt")
                                                : read_text_file(*args.get("--file"));
  // The tokenizer alone: a vocabulary-only GGUF (no tensors) tokenizes too, as with llama.cpp.
  const auto tokenizer = model::load_tokenizer(args.get_or("--model", default_model_path()),
                                               {args.get_or("--tokenizer-pre", "")});
  const model::Tokenizer& tok = *tokenizer;
  const std::vector<int32_t> ids = tok.encode(text, args.has("--bos"), args.has("--special"));

  if (args.has("--json")) {
    JsonWriter j;
    j.begin_object().key("tokens").begin_array();
    for (int32_t id : ids) j.value(int64_t(id));
    j.end_array().end_object();
    std::printf("%s\n", j.str().c_str());
  } else if (args.has("--ids")) {
    std::string out = "[";
    for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
    std::printf("%s]\n", out.c_str());
  } else {
    for (int32_t id : ids) {
      std::printf("%6d -> '%s'\n", id, tok.decode_token(id, true).c_str());
    }
  }
  return 0;
}

}  // namespace ork::cli
