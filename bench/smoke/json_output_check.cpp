// json_output_check: runs a benchmark program once and checks that what it prints is valid JSON, for
// the `bench-smoke` ctest runs (bench/CMakeLists.txt), so that the bench/ programs cannot rot.
//
// usage: json_output_check PROGRAM [ARGS...]
// Passes (exit 0) when PROGRAM exits 0 and its standard output is exactly one JSON object (RFC 8259,
// strict: nlohmann::json's parser, which also rejects invalid UTF-8), not empty, whose "benchmarks"
// member — Google Benchmark's list of results — when present is a non-empty array (a filter that
// matched nothing prints an empty one). Otherwise prints one line naming what is wrong, exit 1.
// PROGRAM's standard error passes through.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

namespace {

int fail(const char* program, const std::string& why) {
  std::fprintf(stderr, "json_output_check: %s: %s\n", program, why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: json_output_check PROGRAM [ARGS...]\n");
    return 2;
  }
  const char* program = argv[1];
  int fds[2];
  if (::pipe(fds) != 0) return fail(program, std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) return fail(program, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(program, argv + 1);
    std::fprintf(stderr, "json_output_check: %s: cannot run: %s\n", program, std::strerror(errno));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      out.append(buf, size_t(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return fail(program, "killed by signal " + std::to_string(WTERMSIG(status)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail(program, "exit status " + std::to_string(WEXITSTATUS(status)));

  nlohmann::json j;
  try {
    j = nlohmann::json::parse(out);
  } catch (const nlohmann::json::parse_error& e) {
    return fail(program, std::string("output is not valid JSON: ") + e.what());
  }
  if (!j.is_object() || j.empty()) return fail(program, "output is not a non-empty JSON object");
  if (j.contains("benchmarks") && (!j["benchmarks"].is_array() || j["benchmarks"].empty()))
    return fail(program, "\"benchmarks\" is not a non-empty array (did the filter match nothing?)");
  std::printf("json_output_check: %s: one JSON object of %zu members, %zu bytes\n", program, j.size(),
              out.size());
  return 0;
}
