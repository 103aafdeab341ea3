#include "vacc/sweep/worker_pool.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "fd_io.h"
#include "vacc/support/error.h"

extern char **environ;

namespace vacc::sweep {

namespace fs = std::filesystem;

struct WorkerPool::Worker {
  int index = 0;
  pid_t pid = -1;
  int to_worker = -1;    // our end of its task pipe
  int from_worker = -1;  // our end of its outcome pipe
  std::string log_path;
  std::string buffer;        // outcome bytes not yet ending in a newline
  std::optional<Task> task;  // the task it runs, if any
};

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) fail("cannot find this executable (/proc/self/exe): {}", ec.message());
  return p.string();
}

WorkerPool::WorkerPool(int workers, std::string executable, std::string log_dir,
                       std::string log_prefix)
    : workers_(static_cast<size_t>(std::max(1, workers))),
      executable_(std::move(executable)),
      log_dir_(std::move(log_dir)),
      log_prefix_(std::move(log_prefix)) {
  // A worker that dies must not kill the pool with SIGPIPE when we write its next task.
  signal(SIGPIPE, SIG_IGN);
  std::error_code ec;
  fs::create_directories(log_dir_, ec);
  for (size_t i = 0; i < workers_.size(); ++i) {
    workers_[i].index = static_cast<int>(i);
    workers_[i].log_path =
        (fs::path(log_dir_) / fmt::format("{}worker-{}.log", log_prefix_, i)).string();
  }
}

WorkerPool::~WorkerPool() {
  for (Worker &w : workers_) stop(w);
}

void WorkerPool::start(Worker &w) {
  int tasks[2], outcomes[2];
  if (pipe2(tasks, O_CLOEXEC) != 0 || pipe2(outcomes, O_CLOEXEC) != 0)
    fail("cannot create a pipe for a sweep worker: {}", std::strerror(errno));
  // Above the worker's 3 and 4, so that dup2 onto them always clears close-on-exec.
  for (int *fd : {&tasks[0], &tasks[1], &outcomes[0], &outcomes[1]}) {
    const int high = fcntl(*fd, F_DUPFD_CLOEXEC, 10);
    if (high < 0) fail("cannot set up a pipe for a sweep worker: {}", std::strerror(errno));
    close(*fd);
    *fd = high;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, tasks[0], 3);
  posix_spawn_file_actions_adddup2(&actions, outcomes[1], 4);
  posix_spawn_file_actions_addopen(&actions, 1, w.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> args = {executable_, "sweep-worker", "--in-fd", "3", "--out-fd", "4"};
  std::vector<char *> argv;
  for (auto &a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = posix_spawn(&w.pid, executable_.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(tasks[0]);
  close(outcomes[1]);
  if (rc != 0) {
    close(tasks[1]);
    close(outcomes[0]);
    fail("cannot start a sweep worker ({}): {}", executable_, std::strerror(rc));
  }
  w.to_worker = tasks[1];
  w.from_worker = outcomes[0];
  w.buffer.clear();
  w.task.reset();
}

void WorkerPool::stop(Worker &w) {
  if (w.pid < 0) return;
  if (w.to_worker >= 0) close(w.to_worker);  // EOF: the worker exits after its current task
  if (w.from_worker >= 0) close(w.from_worker);
  int status = 0;
  waitpid(w.pid, &status, 0);
  w.pid = -1;
  w.to_worker = w.from_worker = -1;
}

namespace {

std::string log_tail(const std::string &path, size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += (out.empty() ? "" : " | ") + all[i];
  return out;
}


}  // namespace

TaskOutcome WorkerPool::crashed(Worker &w) {
  TaskOutcome o;
  o.key = w.task->key;
  int status = 0;
  if (w.pid > 0) waitpid(w.pid, &status, 0);
  w.pid = -1;
  close(w.to_worker);
  close(w.from_worker);
  w.to_worker = w.from_worker = -1;
  const std::string how =
      WIFSIGNALED(status)
          ? fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)))
          : fmt::format("exited with status {}", WEXITSTATUS(status));
  o.message = fmt::format(
      "the worker process {} while running this task (an internal error); "
      "its log {}: {}",
      how, w.log_path, log_tail(w.log_path, 3));
  w.task.reset();
  return o;
}

void WorkerPool::run(TaskSource &source) {
  for (;;) {
    source.poll();
    // Hand out work.
    for (Worker &w : workers_) {
      if (w.task) continue;
      std::optional<Task> t = source.next();
      if (!t) break;
      if (w.pid < 0) start(w);
      w.task = std::move(t);
      if (!write_all(w.to_worker, to_json(*w.task).dump() + "\n")) source.done(crashed(w));
    }
    bool busy = false;
    for (const Worker &w : workers_) busy = busy || w.task.has_value();
    if (!busy && source.exhausted()) return;

    // Wait for outcomes (briefly, so that the source is polled often).
    std::vector<pollfd> fds;
    std::vector<Worker *> owners;
    for (Worker &w : workers_)
      if (w.task) {
        fds.push_back({w.from_worker, POLLIN, 0});
        owners.push_back(&w);
      }
    if (fds.empty()) {
      usleep(5000);
      continue;
    }
    const int ready = ::poll(fds.data(), fds.size(), 5);
    if (ready <= 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker &w = *owners[i];
      char chunk[65536];
      const ssize_t n = read(w.from_worker, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        source.done(crashed(w));
        continue;
      }
      w.buffer.append(chunk, static_cast<size_t>(n));
      const size_t newline = w.buffer.find('\n');
      if (newline == std::string::npos) continue;
      TaskOutcome o;
      try {
        o = outcome_from_json(nlohmann::json::parse(w.buffer.substr(0, newline)));
      } catch (const std::exception &e) {
        o.key = w.task->key;
        o.message = fmt::format("unreadable answer from the worker: {}", e.what());
      }
      w.buffer.erase(0, newline + 1);
      w.task.reset();
      source.done(o);
    }
  }
}

}  // namespace vacc::sweep
