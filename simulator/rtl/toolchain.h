// The tools that build an RTL model on demand, found at run time: Verilator and make from
// $PATH, the C++ compiler (and ccache) vacc itself was built with. Their versions are part of
// the model cache key (model_key.h).
#pragma once

#include <string>

namespace vacc::sim {

struct Toolchain {
  std::string verilator;          // the executable, from $PATH
  std::string verilator_version;  // first line of `verilator --version`
  std::string verilator_root;     // `verilator --getenv VERILATOR_ROOT` (include/ lives here)
  std::string compiler;           // the C++ compiler
  std::string compiler_version;   // first line of `<compiler> --version`
  std::string make;
  std::string ccache;  // "" when there is none
};

// Finds the tools (once per process). Throws vacc::Error naming the step "find the tools"
// and what is missing, e.g. Verilator not on $PATH, and how to install it.
const Toolchain &build_toolchain();

}  // namespace vacc::sim
