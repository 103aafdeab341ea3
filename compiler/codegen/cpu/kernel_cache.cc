#include "vacc/codegen/cpu/kernel_cache.h"

#include <elf.h>
#include <fmt/format.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "vacc/support/cache_dir.h"
#include "vacc/support/hash.h"
#include "vacc/tir/equal.h"

namespace vacc::codegen::cpu {
namespace {

namespace fs = std::filesystem;
constexpr const char *kMagic = "vacc-cpu-kernel 1";

// dl_iterate_phdr callback: the build id note of the object that contains `data`'s address.
struct BuildIdSearch {
  uintptr_t address = 0;
  std::string id;
};

int find_build_id(dl_phdr_info *info, size_t, void *data) {
  auto *search = static_cast<BuildIdSearch *>(data);
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && search->address >= begin && search->address < begin + ph.p_memsz)
      contains = true;
  }
  if (!contains) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
    const char *end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p);
      const char *name = p + sizeof(ElfW(Nhdr));
      const auto *desc =
          reinterpret_cast<const uint8_t *>(name + ((note->n_namesz + 3) & ~size_t{3}));
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::string(name) == "GNU") {
        for (uint32_t k = 0; k < note->n_descsz; ++k) search->id += fmt::format("{:02x}", desc[k]);
        return 1;
      }
      p = reinterpret_cast<const char *>(desc) + ((note->n_descsz + 3) & ~size_t{3});
    }
  }
  return 1;
}

}  // namespace

std::string build_id() {
  static const std::string id = [] {
    BuildIdSearch search;
    search.address = reinterpret_cast<uintptr_t>(&find_build_id);
    dl_iterate_phdr(find_build_id, &search);
    if (!search.id.empty()) return search.id;
    struct stat st {};
    if (::stat("/proc/self/exe", &st) == 0)
      return fmt::format("exe-{}-{}", st.st_size,
                         st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
    return std::string("unknown");
  }();
  return id;
}

std::string default_kernel_cache_dir() {
  return (fs::path(user_cache_dir()) / "cpu").string();
}

std::string KernelCache::key(const tir::Func &f, const std::string &generator) {
  return fmt::format("{:016x}-{:016x}", tir::structural_hash(f), fnv1a(generator));
}

std::string KernelCache::path(const std::string &key) const {
  return (fs::path(dir_) / (key + ".o")).string();
}

FileLock KernelCache::lock(const std::string &key) const {
  std::error_code ec;
  fs::create_directories(fs::path(dir_) / "locks", ec);
  return FileLock((fs::path(dir_) / "locks" / (key + ".lock")).string());
}

// Layout: "<magic>\n<key>\n<bytes> <fnv1a hex>\n" then the object's bytes.
KernelCache::Entry KernelCache::load(const std::string &key) const {
  std::ifstream in(path(key), std::ios::binary);
  if (!in) return {};
  std::string magic, stored_key, sum;
  uint64_t bytes = 0;
  std::getline(in, magic);
  std::getline(in, stored_key);
  in >> bytes >> sum;
  if (!in || in.get() != '\n' || magic != kMagic) return {std::nullopt, "its header is unreadable"};
  if (stored_key != key) return {std::nullopt, "it holds another key"};
  std::string object(bytes, '\0');
  in.read(object.data(), static_cast<std::streamsize>(bytes));
  if (static_cast<uint64_t>(in.gcount()) != bytes || in.peek() != EOF)
    return {std::nullopt, fmt::format("its size is not the {} bytes its header says", bytes)};
  if (fmt::format("{:016x}", fnv1a(object)) != sum)
    return {std::nullopt, "its checksum does not match"};
  return {std::move(object), ""};
}

std::string KernelCache::store(const std::string &key, const std::string &object) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return fmt::format("cannot create {}: {}", dir_, ec.message());
  static std::atomic<int> serial{0};
  const std::string tmp =
      (fs::path(dir_) / fmt::format(".{}.{}-{}.tmp", key, ::getpid(), serial++)).string();
  {
    std::ofstream out(tmp, std::ios::binary);
    out << kMagic << "\n"
        << key << "\n"
        << object.size() << " " << fmt::format("{:016x}", fnv1a(object)) << "\n";
    out.write(object.data(), static_cast<std::streamsize>(object.size()));
    if (!out.flush()) {
      fs::remove(tmp, ec);
      return fmt::format("cannot write {}", tmp);
    }
  }
  sync_file(tmp);
  fs::rename(tmp, path(key), ec);
  if (ec) {
    fs::remove(tmp, ec);
    return fmt::format("cannot rename into {}: {}", path(key), ec.message());
  }
  return "";
}

}  // namespace vacc::codegen::cpu
