// The package (.vpkg) loader: header, tensors, steps, blobs, validation, and each accelerator
// step's command list (deserialized, checked against the default config, printed). The input's
// checksum field is recomputed first, so that mutations reach the parser instead of all
// stopping at the checksum test (which the replayed inputs also exercise unchanged).
#include <cstring>

#include "fuzz_targets.h"
#include "vacc/isa/command.h"
#include "vacc/isa/package.h"
#include "vacc/support/error.h"

namespace vacc::fuzz {

void fuzz_package(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  if (bytes.size() >= 32) {
    const uint64_t sum = isa::package_checksum(bytes);
    std::memcpy(bytes.data() + 24, &sum, 8);
  }
  const isa::Package p = isa::parse_package(bytes, "fuzz.vpkg");
  for (const isa::PackageStep &step : p.steps) {
    if (!step.commands) continue;
    try {
      const isa::CommandList list = isa::deserialize(p.blobs[*step.commands]);
      isa::check_command_list(list, default_config());
      isa::to_text(list);
    } catch (const Error &) {
    }
  }
}

}  // namespace vacc::fuzz
