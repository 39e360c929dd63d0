#pragma once
// Starts validation/testing/fake_server.py on a free port for a test and stops it at the end.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvsim::validation::testing {

class FakeServer {
 public:
  explicit FakeServer(const std::vector<std::string>& args) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      close(fds[1]);
      std::vector<std::string> argv{
          "python3", std::string(KVSIM_SOURCE_DIR) + "/validation/testing/fake_server.py", "--port",
          "0"};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<char*> c;
      for (auto& a : argv) c.push_back(a.data());
      c.push_back(nullptr);
      execvp("python3", c.data());
      _exit(127);
    }
    close(fds[1]);
    FILE* f = fdopen(fds[0], "r");
    char line[256] = {0};
    if (f == nullptr || fgets(line, sizeof line, f) == nullptr)
      throw std::runtime_error("fake server did not start");
    fclose(f);
    std::string s(line);
    const std::string prefix = "listening on ";
    if (s.rfind(prefix, 0) != 0) throw std::runtime_error("unexpected fake server line: " + s);
    url_ = s.substr(prefix.size());
    while (!url_.empty() && (url_.back() == '\n' || url_.back() == '\r')) url_.pop_back();
  }
  ~FakeServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;
  const std::string& url() const { return url_; }

 private:
  pid_t pid_ = -1;
  std::string url_;
};

}  // namespace kvsim::validation::testing
