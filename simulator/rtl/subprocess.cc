#include "subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

extern char **environ;

namespace vacc::sim {
namespace {

std::vector<char *> c_args(std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (std::string &s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The caller's environment with `options`' changes applied, as NAME=VALUE strings.
std::vector<std::string> child_environment(const ProcessOptions &options) {
  std::vector<std::string> env;
  for (char **e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool drop = false;
    for (const std::string &u : options.unset_env) drop = drop || name == u;
    for (const auto &[n, v] : options.set_env) drop = drop || name == n;
    if (!drop) env.push_back(entry);
  }
  for (const auto &[n, v] : options.set_env) env.push_back(n + "=" + v);
  return env;
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::string find_on_path(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return "";
}

int run_process(const std::vector<std::string> &argv, const ProcessOptions &options,
                std::string *error) {
  std::vector<std::string> args = argv, env = child_environment(options);
  std::vector<char *> c_argv = c_args(args), c_env = c_args(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  if (!options.log_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, options.log_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    if (error) *error = std::strerror(rc);
    return -1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  double next_tick = options.tick_seconds;
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return exit_code(status);
    if (done < 0 && errno != EINTR) {
      if (error) *error = std::strerror(errno);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (options.tick && s >= next_tick) {
      options.tick(s);
      next_tick += options.tick_seconds;
    }
  }
}

std::optional<std::string> process_output(const std::vector<std::string> &argv) {
  int fds[2];
  if (::pipe(fds) != 0) return std::nullopt;
  std::vector<std::string> args = argv;
  std::vector<char *> c_argv = c_args(args);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, c_argv[0], &actions, nullptr, c_argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  std::string out;
  if (rc == 0) {
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
      if (n < 0) {
        if (errno == EINTR) continue;
        break;
      }
      out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fds[0]);
  if (rc != 0) return std::nullopt;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (exit_code(status) != 0) return std::nullopt;
  return out;
}

}  // namespace vacc::sim
