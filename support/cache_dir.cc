#include "vacc/support/cache_dir.h"

#include <cstdlib>
#include <filesystem>

namespace vacc {

std::string user_cache_dir() {
  namespace fs = std::filesystem;
  if (const char *dir = std::getenv("VACC_CACHE_DIR"); dir && *dir) return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "vacc").string();
  if (const char *home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "vacc").string();
  // No home (a bare service account): a per-machine directory is still better than none.
  return (fs::temp_directory_path() / "vacc-cache").string();
}

}  // namespace vacc
