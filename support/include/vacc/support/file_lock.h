// Cross-process exclusion for the per-user cache (cache_dir.h): an exclusive flock(2) on a lock
// file, so that of several processes wanting the same cache entry only one builds it, and
// fsync before an entry is renamed into place, so that a crash cannot leave a short entry.
#pragma once

#include <functional>
#include <string>

namespace vacc {

// An exclusive flock on `path` (created if missing), held until destroyed. When another
// process holds it, `on_wait` (if set) is called once before blocking.
class FileLock {
 public:
  FileLock(const std::string &path, const std::function<void()> &on_wait = {});
  ~FileLock();
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;
  // Why the lock could not be taken; empty when it is held.
  const std::string &error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

// Flushes the file at `path` to the disk (best effort).
void sync_file(const std::string &path);

}  // namespace vacc
