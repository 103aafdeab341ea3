#include "fuzz_targets.h"

#include "vacc/support/error.h"
#include "vacc/support/limits.h"

namespace vacc::fuzz {

const std::vector<Target> &targets() {
  static const std::vector<Target> all = {
      {"config", fuzz_config},   {"asm", fuzz_asm},
      {"disasm", fuzz_disasm},   {"fsim", fuzz_fsim},
      {"package", fuzz_package}, {"onnx", fuzz_onnx},
      {"npy", fuzz_npy},         {"sweep_spec", fuzz_sweep_spec},
      {"remote", fuzz_remote},
  };
  return all;
}

const Target *find_target(const std::string &name) {
  for (const Target &t : targets())
    if (name == t.name) return &t;
  return nullptr;
}

void set_up() {
  // A fuzzer's inputs are a few KiB; 1 MiB tensors let every shape rule be reached while
  // keeping each run's work (calibration, reference kernels) well under a second.
  set_max_tensor_bytes(uint64_t{1} << 20);
}

const isa::HwConfig &default_config() {
  static const isa::HwConfig config = isa::load_config(isa::resolve_config_path("default"));
  return config;
}

void run_input(const Target &target, const uint8_t *data, size_t size) {
  try {
    target.run(data, size);
  } catch (const Error &) {
    // The diagnostic a user would see: the expected outcome of a bad input.
  }
}

}  // namespace vacc::fuzz
