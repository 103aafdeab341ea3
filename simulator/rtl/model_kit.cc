#include "model_kit.h"

#include <filesystem>
#include <fstream>

#include "vacc/support/error.h"
#include "vacc/support/hash.h"

namespace vacc::sim {

uint64_t model_kit_hash() {
  static const uint64_t hash = [] {
    uint64_t h = kFnv1aSeed;
    for (const KitFile &f : model_kit_files()) h = fnv1a(f.text, fnv1a(f.path, h));
    return h;
  }();
  return hash;
}

const char *model_kit_text(const std::string &path) {
  for (const KitFile &f : model_kit_files())
    if (path == f.path) return f.text;
  VACC_CHECK(false) << "the model kit has no file " << path;
  return nullptr;
}

void write_model_kit(const std::string &dir) {
  namespace fs = std::filesystem;
  for (const KitFile &f : model_kit_files()) {
    const fs::path path = fs::path(dir) / f.path;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << f.text;
    if (!out.flush()) fail("cannot write '{}'", path.string());
  }
}

}  // namespace vacc::sim
