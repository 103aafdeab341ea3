#include "model_cache.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "model_build.h"
#include "model_key.h"
#include "toolchain.h"
#include "vacc/support/cache_dir.h"
#include "vacc/support/error.h"
#include "vacc/support/file_lock.h"

namespace vacc::sim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr int kManifestFormat = 1;

// The CRC-32 (zlib) and size of a file; nullopt when it cannot be read.
std::optional<std::pair<uint64_t, uint32_t>> file_crc(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  uLong crc = crc32(0L, Z_NULL, 0);
  uint64_t bytes = 0;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<size_t>(in.gcount());
    crc = crc32_z(crc, reinterpret_cast<const Bytef *>(buf.data()), n);
    bytes += n;
  }
  return std::make_pair(bytes, static_cast<uint32_t>(crc));
}

// A loaded, checked model library, or why the entry is not one.
struct LoadResult {
  const LoadableModel *model = nullptr;
  std::string problem;
};

// Checks the entry in `dir` against `key` and `hardware_text`, then loads its library. A
// library is never unloaded once its model is used (models live as long as the process).
// Each build names its library afresh: glibc hands back an already loaded library for a path
// it has seen, so a rebuilt entry must not reuse the old file name.
LoadResult load_entry(const fs::path &dir, const std::string &key,
                      const std::string &hardware_text) {
  const fs::path manifest_path = dir / "manifest.json";
  if (!fs::exists(manifest_path)) return {nullptr, "it has no manifest.json"};
  nlohmann::json m;
  try {
    std::ifstream in(manifest_path);
    m = nlohmann::json::parse(in);
    if (m.at("format").get<int>() != kManifestFormat)
      return {nullptr, "its manifest format differs"};
    if (m.at("key").get<std::string>() != key) return {nullptr, "its manifest names another key"};
    if (m.at("abi").get<int>() != kLoadableModelAbi)
      return {nullptr, "it was built for another model interface"};
    if (m.at("hardware").get<std::string>() != hardware_text)
      return {nullptr, "its manifest describes other hardware"};
  } catch (const nlohmann::json::exception &e) {
    return {nullptr, fmt::format("its manifest.json is unreadable ({})", e.what())};
  }
  const std::string library = m.value("library", "");
  if (library.empty() || library.find('/') != std::string::npos)
    return {nullptr, "its manifest names no library"};
  const fs::path path = dir / library;
  const auto crc = file_crc(path);
  if (!crc) return {nullptr, fmt::format("{} is missing", library)};
  if (crc->first != m.value("bytes", uint64_t{0}) || crc->second != m.value("crc32", uint32_t{0}))
    return {nullptr, fmt::format("{} does not match its size and checksum", library)};
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return {nullptr, fmt::format("it does not load: {}", ::dlerror())};
  using EntryFn = const LoadableModel *(*)();
  auto fn = reinterpret_cast<EntryFn>(::dlsym(handle, kLoadableModelSymbol));
  if (fn == nullptr) {
    ::dlclose(handle);
    return {nullptr, fmt::format("{} exports no {} (another model interface)", library,
                                 kLoadableModelSymbol)};
  }
  const LoadableModel *model = fn();
  if (model == nullptr || model->abi != kLoadableModelAbi || std::strcmp(model->key, key.c_str())) {
    ::dlclose(handle);
    return {nullptr, fmt::format("{} is a model for another key or interface", library)};
  }
  return {model, ""};
}

void remove_quietly(const fs::path &path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

// Builds the entry for `key` under `root` while holding its lock; returns the loaded model.
const LoadableModel *build_entry(const isa::HwConfig &config, const std::string &hardware_text,
                                 const std::string &key, const fs::path &root,
                                 const Toolchain &toolchain, const ModelCacheOptions &options) {
  const fs::path entry = root / key;
  const fs::path failed_log = root / ("failed-" + key + ".log");
  const auto t0 = Clock::now();
  // Build directories of this key left by a process that died: only the lock holder builds.
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(root, ec))
    if (e.path().filename().string().rfind(".build-" + key + "-", 0) == 0 ||
        e.path().filename().string().rfind(".stale-" + key + "-", 0) == 0)
      remove_quietly(e.path());

  static int builds = 0;
  const std::string id = fmt::format("{}-{}", ::getpid(), ++builds);
  const fs::path work = root / (".build-" + key + "-" + id);
  const fs::path log = work / "build.log";
  // `output`: the failing tool's last lines, quoted under the message.
  auto fail_step = [&](const std::string &step, const std::string &what, bool has_log,
                       const std::string &output) {
    std::string where;
    if (has_log) {
      std::error_code move_ec;
      fs::rename(log, failed_log, move_ec);
      if (!move_ec) where = "; log: " + failed_log.string();
    }
    std::stringstream lines(output);
    for (std::string line; std::getline(lines, line);) where += "\n  " + line;
    remove_quietly(work);
    fail("cannot build the RTL model for config '{}': step '{}' failed: {}{}", config.name, step,
         what, where);
  };

  try {
    fs::create_directories(work / "obj");
  } catch (const fs::filesystem_error &e) {
    fail_step("prepare the cache",
              fmt::format("cannot create {}: {}", work.string(), e.code().message()), false, "");
  }
  std::string library;
  try {
    ModelBuildRequest request{config, key, work.string(), log.string(), options.progress};
    library = build_model(request, toolchain);
  } catch (const ModelBuildFailure &f) {
    fail_step(f.step(), f.what(), true, f.output());
  }

  // The entry, complete with its manifest, then one rename into place.
  const std::string name = fmt::format(
      "model-{:x}.so", std::chrono::system_clock::now().time_since_epoch().count() ^ ::getpid());
  try {
    const fs::path staged = work / "entry";
    fs::create_directories(staged);
    fs::rename(library, staged / name);
    fs::copy_file(work / "vacc_pkg.sv", staged / "vacc_pkg.sv");
    sync_file(staged / name);
    const auto crc = file_crc(staged / name);
    if (!crc) throw fs::filesystem_error("cannot read back", staged / name, std::error_code());
    nlohmann::ordered_json m;
    m["format"] = kManifestFormat;
    m["key"] = key;
    m["abi"] = kLoadableModelAbi;
    m["config"] = config.name;
    m["hardware"] = hardware_text;
    m["library"] = name;
    m["bytes"] = crc->first;
    m["crc32"] = crc->second;
    m["verilator"] = toolchain.verilator_version;
    m["compiler"] = toolchain.compiler_version;
    m["build_seconds"] = std::chrono::duration<double>(Clock::now() - t0).count();
    {
      std::ofstream out(staged / "manifest.json");
      out << m.dump(2) << "\n";
      if (!out.flush())
        throw fs::filesystem_error("cannot write", staged / "manifest.json", std::error_code());
    }
    sync_file(staged / "manifest.json");
    fs::copy_file(log, staged / "build.log");
    if (fs::exists(entry)) {
      const fs::path stale = root / (".stale-" + key + "-" + id);
      fs::rename(entry, stale);
      remove_quietly(stale);
    }
    fs::rename(staged, entry);
  } catch (const fs::filesystem_error &e) {
    fail_step("store in the cache", e.what(), true, "");
  }
  remove_quietly(work);
  fs::remove(failed_log, ec);

  if (options.progress)
    options.progress(
        fmt::format("[{0}/{0}] load the model from {1}", kModelBuildSteps, entry.string()));
  const LoadResult loaded = load_entry(entry, key, hardware_text);
  if (loaded.model == nullptr) {
    // Keep the log, drop the entry: a model that does not load is of no use to anyone.
    std::error_code move_ec;
    fs::rename(entry / "build.log", failed_log, move_ec);
    remove_quietly(entry);
    fail(
        "cannot build the RTL model for config '{}': step 'load' failed: the library just "
        "built cannot be used ({}); log: {}",
        config.name, loaded.problem, failed_log.string());
  }
  if (options.progress)
    options.progress(fmt::format(
        "model for config '{}' ready in {} (cached as {})", config.name,
        format_seconds(std::chrono::duration<double>(Clock::now() - t0).count()), entry.string()));
  return loaded.model;
}

}  // namespace

std::string model_cache_dir(const ModelCacheOptions &options) {
  return options.dir.empty() ? (fs::path(user_cache_dir()) / "rtl").string() : options.dir;
}

const ModelEntry *cached_model(const isa::HwConfig &config, const std::string &hardware_text,
                               const ModelCacheOptions &options) {
  static std::mutex mutex;
  static std::map<std::string, const LoadableModel *> loaded;  // by entry directory
  std::lock_guard<std::mutex> guard(mutex);

  const Toolchain *toolchain = nullptr;
  try {
    toolchain = &build_toolchain();
  } catch (const Error &) {
    if (!options.build) return nullptr;  // nothing can be cached for a toolchain that is gone
    throw;
  }
  const std::string key = rtl_model_key(hardware_text, *toolchain);
  const fs::path root = model_cache_dir(options);
  const fs::path entry = root / key;
  if (auto it = loaded.find(entry.string()); it != loaded.end()) return &it->second->entry;

  LoadResult found = load_entry(entry, key, hardware_text);
  if (found.model == nullptr && options.build) {
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec)
      fail(
          "cannot build the RTL model for config '{}': step 'prepare the cache' failed: cannot "
          "create the model cache {}: {}; set VACC_CACHE_DIR to a writable directory",
          config.name, root.string(), ec.message());
    const fs::path lock_path = root / (key + ".lock");
    FileLock lock(lock_path.string(), [&] {
      if (options.progress)
        options.progress(
            fmt::format("another process is building this model; waiting for it (lock {})",
                        lock_path.string()));
    });
    if (!lock.error().empty())
      fail(
          "cannot build the RTL model for config '{}': step 'prepare the cache' failed: {}; set "
          "VACC_CACHE_DIR to a writable directory",
          config.name, lock.error());
    // Another process may have built it while this one waited.
    found = load_entry(entry, key, hardware_text);
    if (found.model == nullptr) {
      if (options.progress) {
        if (fs::exists(entry))
          options.progress(fmt::format("the cached model {} is damaged ({}); rebuilding it",
                                       entry.string(), found.problem));
        options.progress(fmt::format(
            "no RTL model for the hardware of config '{}' is built into vacc or cached: building "
            "one (once; --no-build refuses instead, --engine perf needs none)",
            config.name));
      }
      found.model = build_entry(config, hardware_text, key, root, *toolchain, options);
    }
  }
  if (found.model == nullptr) return nullptr;
  loaded[entry.string()] = found.model;
  return &found.model->entry;
}

}  // namespace vacc::sim
