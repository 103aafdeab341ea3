// The per-user cache every part of vacc shares (RTL models built on demand, synthesis
// results): $VACC_CACHE_DIR, else $XDG_CACHE_HOME/vacc, else ~/.cache/vacc. Each user of the
// cache keeps to its own subdirectory ("rtl", "synth").
#pragma once

#include <string>

namespace vacc {

// The cache's root directory (not created here).
std::string user_cache_dir();

}  // namespace vacc
