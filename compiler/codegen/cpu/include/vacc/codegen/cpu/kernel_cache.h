// The CPU backend's kernel cache on disk, under the per-user cache ($VACC_CACHE_DIR/cpu, see
// support/cache_dir.h): one file per compiled kernel holding its object code, so that a second
// process running the same model links the kernels instead of compiling them again.
//
// An entry is keyed by the kernel's structural hash (tir::structural_hash: loop structure,
// types, shapes and constants, never names) and the code generator that compiled it: the
// target (triple, CPU, features), LLVM's version and the build of vacc (its ELF build id), so
// that a rebuilt vacc or another machine never links stale code. Entries are written to a
// temporary file, flushed and renamed into place; a per-key lock (support/file_lock.h) makes
// concurrent processes compile a kernel once. An entry whose header, size or checksum does not
// match is reported as damaged, and the caller compiles the kernel again and replaces it.
#pragma once

#include <optional>
#include <string>

#include "vacc/support/file_lock.h"
#include "vacc/tir/func.h"

namespace vacc::codegen::cpu {

class KernelCache {
 public:
  // `dir` is created on the first store.
  explicit KernelCache(std::string dir) : dir_(std::move(dir)) {}
  const std::string &dir() const { return dir_; }

  // The entry key of `f` compiled by the code generator described by `generator` (target and
  // versions; see Jit).
  static std::string key(const tir::Func &f, const std::string &generator);

  struct Entry {
    std::optional<std::string> object;  // the object code, when the entry exists and is sound
    std::string problem;                // why an existing entry cannot be used
  };
  Entry load(const std::string &key) const;
  // Writes the entry; returns why it could not ("" when stored).
  std::string store(const std::string &key, const std::string &object) const;
  std::string path(const std::string &key) const;
  // Holds the key's lock while alive (error() says why it could not be taken).
  FileLock lock(const std::string &key) const;

 private:
  std::string dir_;
};

// The default directory: $VACC_CACHE_DIR/cpu (cache_dir.h).
std::string default_kernel_cache_dir();

// The GNU build id of the binary this code is linked into (hex), else its size and
// modification time: changes whenever vacc is rebuilt differently.
std::string build_id();

}  // namespace vacc::codegen::cpu
