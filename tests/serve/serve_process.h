// Starts the real `ork serve` of this build on a loopback port (--port 0: the kernel picks a free
// one, which ork prints on stdout) and stops it (SIGTERM) at the end of the scope.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "build_dirs.h"

namespace ork::testing {

class ServeProcess {
 public:
  explicit ServeProcess(const std::vector<std::string>& extra) {
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe");
    const std::string ork = ork::testing::binary_dir() + "/ork";
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      std::vector<std::string> a = {ork, "serve", "--host", "127.0.0.1", "--port", "0", "-t", "1"};
      a.insert(a.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (std::string& s : a) argv.push_back(s.data());
      argv.push_back(nullptr);
      execv(ork.c_str(), argv.data());
      _exit(127);
    }
    close(out[1]);
    std::string line;
    char c;
    while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    close(out[0]);
    port_ = line.empty() ? -1 : std::stoi(line);
  }
  ~ServeProcess() { (void)stop(); }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  int port() const { return port_; }  // -1 when ork serve did not start
  pid_t pid() const { return pid_; }  // -1 after stop()
  // Sends SIGTERM and returns the exit status (128 + signal when killed by one).
  int stop() {
    if (pid_ <= 0) return status_;
    kill(pid_, SIGTERM);
    int st = 0;
    waitpid(pid_, &st, 0);
    pid_ = -1;
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int port_ = -1;
  int status_ = -1;
};

}  // namespace ork::testing
