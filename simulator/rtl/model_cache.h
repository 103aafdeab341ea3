// The per-user cache of RTL models built on demand: for a config whose hardware has no model
// built into vacc, the rtl engine loads one from here, building it first when there is none
// (model_build.h). Layout under the cache directory (default $VACC_CACHE_DIR/rtl):
//
//   <key>/manifest.json   key, hardware package, library name, size and CRC-32, tool versions
//   <key>/model-<id>.so   the model library (a fresh name per build: see load_entry)
//   <key>/build.log, <key>/vacc_pkg.sv
//   <key>.lock            held (flock) by the one process building <key>
//   .build-<key>-<pid>-<n>/  a build in progress, renamed to <key>/ when complete
//   failed-<key>.log      the log of the last failed build of <key>
//
// An entry appears only through one rename of a complete directory, so readers need no lock:
// whatever fails the manifest, size, checksum, dlopen or interface checks is damaged or stale
// and rebuilt under the lock. Concurrent builders of one key (two processes, MPI ranks) wait
// for the first; a failed build leaves no entry and no build directory behind.
#pragma once

#include <functional>
#include <string>

#include "rtl_model.h"
#include "vacc/isa/config.h"

namespace vacc::sim {

struct ModelCacheOptions {
  bool build = true;  // false: use a cached model but never build one (--no-build)
  std::string dir;    // "" = user_cache_dir()/rtl
  std::function<void(const std::string &)> progress;  // build progress lines
};

// The model for `config` (whose rtl_hardware_text is `hardware_text`), loaded once per
// process and cache directory. Returns nullptr when options.build is false and no valid model
// is cached. Throws vacc::Error naming the step (and the log file, when a tool ran) when the
// model cannot be built or loaded.
const ModelEntry *cached_model(const isa::HwConfig &config, const std::string &hardware_text,
                               const ModelCacheOptions &options);

// The directory of models: options.dir, or the default.
std::string model_cache_dir(const ModelCacheOptions &options);

}  // namespace vacc::sim
