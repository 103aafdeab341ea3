#include "model_key.h"

#include <fmt/format.h>

#include "model_kit.h"
#include "rtl_model.h"
#include "vacc/hw/package.h"
#include "vacc/support/hash.h"

namespace vacc::sim {

std::string rtl_hardware_text(const isa::HwConfig &config) {
  isa::HwConfig c = config;
  // The name appears only in the package's header comment; errors still name the file.
  if (c.source.empty()) c.source = c.name;
  c.name = "-";
  return hw::generate_package(c);
}

std::string rtl_model_key(const std::string &hardware_text, const Toolchain &toolchain) {
  uint64_t h = fnv1a(hardware_text);
  h = fnv1a(
      fmt::format("abi {} kit {:016x} {}", kLoadableModelAbi, model_kit_hash(), kModelBuildRecipe),
      h);
  h = fnv1a(toolchain.verilator_version, h);
  h = fnv1a(toolchain.compiler_version, h);
  return fmt::format("{:016x}", h);
}

}  // namespace vacc::sim
