// libFuzzer's entry for one target, chosen at build time (VACC_FUZZ_TARGET); built only by
// `make fuzz` with clang's -fsanitize=fuzzer.
#include "fuzz_targets.h"

namespace {
const vacc::fuzz::Target &target() {
  static const vacc::fuzz::Target *t = vacc::fuzz::find_target(VACC_FUZZ_TARGET);
  return *t;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  vacc::fuzz::set_up();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vacc::fuzz::run_input(target(), data, size);
  return 0;
}
