// Processes of `vacc` for the remote tests: spawned with their output in files, waited for
// with a limit, polled for a condition.
#pragma once

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace vacc::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

inline std::string slurp(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A child process of `vacc` with its standard output and error in files.
struct Proc {
  pid_t pid = -1;
  fs::path out, err;
  std::string stdout_text() const { return slurp(out); }
  std::string stderr_text() const { return slurp(err); }
};

inline Proc spawn(const std::vector<std::string> &args, const fs::path &dir,
                  const std::string &tag) {
  Proc p;
  p.out = dir / (tag + ".out");
  p.err = dir / (tag + ".err");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, p.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, p.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char *> argv;
  std::vector<std::string> all = {VACC_BIN};
  all.insert(all.end(), args.begin(), args.end());
  for (auto &a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = posix_spawn(&p.pid, VACC_BIN, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("posix_spawn failed");
  return p;
}

// The exit status, or -signal; fails the test past `limit`.
inline int wait_exit(const Proc &p, std::chrono::seconds limit = 300s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (true) {
    int status = 0;
    const pid_t r = waitpid(p.pid, &status, WNOHANG);
    if (r == p.pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    if (r < 0) {
      ADD_FAILURE() << "process " << p.pid << " was already waited for (it had exited)";
      return -1;
    }
    if (std::chrono::steady_clock::now() > end) {
      kill(p.pid, SIGKILL);
      waitpid(p.pid, &status, 0);
      ADD_FAILURE() << "process " << p.pid << " did not end within " << limit.count() << " s";
      return -1;
    }
    std::this_thread::sleep_for(20ms);
  }
}

// Waits until `pred` holds (polling), at most `limit`.
template <typename Pred>
bool eventually(Pred pred, std::chrono::seconds limit = 120s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return pred();
}

// Whether the process has ended (without reaping it, so wait_exit still sees its status).
inline bool has_exited(const Proc &p) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(p.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
         info.si_pid != 0;
}

inline size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// The first `n` of the bundled images as a float32 .npy of shape [n, 1, 28, 28].
inline void write_first_images(const std::string &models_dir, const fs::path &path, int n) {
  const std::string all = slurp(models_dir + "/fashion_mnist_samples.npy");
  const size_t header = 10 + (static_cast<uint8_t>(all[8]) | static_cast<uint8_t>(all[9]) << 8);
  std::string dict =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, 1, 28, 28), }}", n);
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  out += all.substr(header, static_cast<size_t>(n) * 28 * 28 * 4);
  std::ofstream(path, std::ios::binary) << out;
}

}  // namespace vacc::test
