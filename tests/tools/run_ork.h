// Runs the real `ork` binary of this build as a subprocess, for the CLI tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "build_dirs.h"
#include "model/temp_dir.h"

namespace ork::testing {

struct OrkResult {
  int status = -1;  // exit status (128 + signal when killed)
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `ork ARGS` through the shell; stderr goes through a file in `dir`.
inline OrkResult run_ork(const std::string& args, const TempDir& dir) {
  const std::string err_file = dir.file("stderr.txt");
  const std::string cmd = ork::testing::binary_dir() + "/ork " + args + " 2>" + err_file;
  OrkResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  std::ifstream e(err_file);
  r.err.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  return r;
}

}  // namespace ork::testing
