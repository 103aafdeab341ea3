// What identifies a Verilated model of vacc_top. The hardware part of a config is the
// SystemVerilog package generated for it (hw::generate_package) with the config's name left
// out: every config key that changes the RTL reaches it through that package, and nothing
// else does (memory timing and clock are applied by the simulator at run time), so configs
// with the same package share one model whatever else differs. A model built on demand is
// cached under a key that adds what it was built from: the model kit (RTL sources and C++
// harness, model_kit.h), the Verilator and compiler versions and the build recipe.
#pragma once

#include <string>

#include "toolchain.h"
#include "vacc/isa/config.h"

namespace vacc::sim {

// The package text for `config`, independent of its name. Throws vacc::Error (naming the
// config and key) for a config this RTL cannot be built for.
std::string rtl_hardware_text(const isa::HwConfig &config);

// The build recipe's version: change it whenever model_build.cc builds differently.
inline constexpr const char *kModelBuildRecipe = "model-build-v1";

// The cache key (16 hex digits) of the model for `hardware_text` built with `toolchain`.
std::string rtl_model_key(const std::string &hardware_text, const Toolchain &toolchain);

}  // namespace vacc::sim
