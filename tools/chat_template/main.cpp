// ork-set-chat-template IN.gguf TEMPLATE.jinja OUT.gguf — copies a GGUF file, metadata and tensors
// byte for byte, with tokenizer.chat_template set to the text of TEMPLATE.jinja (replacing any).
// The build uses it to give the default model its template (models/README.md).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"
#include "gguf/file.h"
#include "gguf/writer.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: ork-set-chat-template IN.gguf TEMPLATE.jinja OUT.gguf\n");
    return 2;
  }
  try {
    const ork::gguf::File in = ork::gguf::File::open(argv[1]);
    std::ifstream t(argv[2], std::ios::binary);
    ORK_CHECK(t.good(), argv[2], ": cannot read");
    std::stringstream ss;
    ss << t.rdbuf();
    ork::gguf::Writer w;
    w.set_alignment(in.alignment());
    for (const ork::gguf::KeyValue& kv : in.metadata()) {
      if (kv.key == "tokenizer.chat_template" || kv.key == "general.alignment") continue;
      w.add_value(kv.key, kv.value);
    }
    w.add_string("tokenizer.chat_template", ss.str());
    for (const ork::gguf::TensorInfo& ti : in.tensors()) {
      w.add_tensor(ti.name, ti.type, ti.dims, ti.data, ti.n_bytes);
    }
    w.write(argv[3]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ork-set-chat-template: error: %s\n", e.what());
    return 1;
  }
}
