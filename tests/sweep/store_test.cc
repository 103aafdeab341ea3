// The results database: a task is claimed by exactly one of several processes' connections
// at once, results survive reopening, abandoned claims are handed back, and a directory
// holding another spec's results is refused without being changed.
#include "vacc/sweep/store.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "vacc/support/error.h"

namespace vacc::sweep {
namespace {

namespace fs = std::filesystem;

std::string temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "vacc-store-XXXXXX").string();
  return mkdtemp(pattern.data());
}

std::vector<TaskKey> some_tasks(int n) {
  std::vector<TaskKey> t;
  for (int i = 0; i < n; ++i) t.push_back({i, "w", "run"});
  return t;
}

TEST(Store, ProcessesClaimEachTaskOnce) {
  const std::string dir = temp_dir();
  Store::open(dir, "f1", "spec", "s.yaml")->add_tasks(some_tasks(60));
  // Three processes drain the queue at once, each recording what it claimed in the result.
  std::vector<pid_t> children;
  for (int c = 0; c < 3; ++c) {
    const pid_t pid = fork();
    if (pid == 0) {
      auto store = Store::open(dir, "f1", "spec", "s.yaml");
      while (auto k = store->claim(process_owner()))
        store->finish(*k, true, "", {{"by", getpid()}}, 0.0);
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto store = Store::open(dir, "f1", "spec", "s.yaml");
  const auto done = store->tasks("run", "ok");
  ASSERT_EQ(done.size(), 60u);
  std::set<int64_t> seen;
  for (const auto &t : done) EXPECT_TRUE(seen.insert(t.key.point).second);
  EXPECT_EQ(store->counts().pending, 0);
  fs::remove_all(dir);
}

TEST(Store, AbandonedClaimsGoBackToPending) {
  const std::string dir = temp_dir();
  auto store = Store::open(dir, "f1", "spec", "s.yaml");
  store->add_tasks(some_tasks(3));
  // A process that claims a task and dies.
  const pid_t pid = fork();
  if (pid == 0) {
    auto s = Store::open(dir, "f1", "spec", "s.yaml");
    s->claim(process_owner());
    _exit(0);
  }
  waitpid(pid, nullptr, 0);
  EXPECT_EQ(store->counts().running, 1);
  // Our own claim is alive and stays.
  ASSERT_TRUE(store->claim(process_owner()));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(store->release_abandoned(host), 1);
  const TaskCounts c = store->counts();
  EXPECT_EQ(c.running, 1);
  EXPECT_EQ(c.pending, 2);
  fs::remove_all(dir);
}

TEST(Store, RefusesAnotherSpecsDirectoryWithoutChangingIt) {
  const std::string dir = temp_dir();
  {
    auto store = Store::open(dir, "aaaa", "spec A", "a.yaml");
    store->add_tasks(some_tasks(2));
    auto k = store->claim(process_owner());
    store->finish(*k, true, "", {{"x", 1}}, 0.5);
  }
  std::string message;
  try {
    Store::open(dir, "bbbb", "spec B", "b.yaml");
  } catch (const Error &e) {
    message = e.what();
  }
  EXPECT_NE(message.find(dir + "/sweep.db: holds the results of another sweep spec (a.yaml"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Nothing was changed"), std::string::npos) << message;
  auto store = Store::open(dir, "aaaa", "spec A", "a.yaml");
  EXPECT_EQ(store->counts().ok, 1);
  EXPECT_EQ(store->tasks("run", "ok").at(0).result.at("x"), 1);
  fs::remove_all(dir);
}

TEST(Store, UnwritableDirectoryIsNamed) {
  if (geteuid() == 0) {
    // root writes anywhere; a path under a regular file cannot be a directory for anyone.
    const std::string dir = temp_dir();
    const std::string file = dir + "/plain";
    std::FILE *f = std::fopen(file.c_str(), "w");
    std::fclose(f);
    std::string message;
    try {
      Store::open(file + "/out", "f", "s", "s.yaml");
    } catch (const Error &e) {
      message = e.what();
    }
    EXPECT_NE(message.find(file + "/out: cannot create the sweep's output directory"),
              std::string::npos)
        << message;
    fs::remove_all(dir);
    return;
  }
  const std::string dir = temp_dir();
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  std::string message;
  try {
    Store::open(dir, "f", "s", "s.yaml");
  } catch (const Error &e) {
    message = e.what();
  }
  EXPECT_NE(message.find(dir + ": the sweep's output directory is not writable"), std::string::npos)
      << message;
  fs::permissions(dir, fs::perms::owner_all);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vacc::sweep
