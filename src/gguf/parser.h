// gguf::Parser — builds a gguf::File from its mapped bytes (internal to src/gguf).
//
// Every read is bounds-checked against the bytes that remain; every size computed from the file is
// overflow-checked. Errors are ork::Error whose message starts with the path and names the field.
#pragma once

#include <string>

#include "gguf/file.h"

namespace ork::gguf {

class Parser {
 public:
  // Maps `path` and parses it into a File.
  static File open(const std::string& path);

  // Deepest nesting of arrays accepted (an array of arrays of ... ); deeper is an error.
  static constexpr int kMaxArrayDepth = 16;
};

}  // namespace ork::gguf
