// The .npy reader.
#include <cstdlib>

#include "fuzz_targets.h"
#include "vacc/support/npy.h"

namespace vacc::fuzz {

void fuzz_npy(const uint8_t *data, size_t size) {
  const NpyArray a =
      parse_npy(std::string_view(reinterpret_cast<const char *>(data), size), "fuzz.npy");
  if (static_cast<int64_t>(a.data.size()) != a.elements() * a.item_bytes()) std::abort();
}

}  // namespace vacc::fuzz
