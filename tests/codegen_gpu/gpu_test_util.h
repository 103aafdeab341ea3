// Helpers of the GPU backend's tests: ptxas where CUDA's toolkit is installed (Debian does not
// package it), a GPU where the machine has one; each says why when it is absent.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "vacc/runtime/gpu_device.h"
#include "vacc/support/error.h"

namespace vacc::test {

// $VACC_PTXAS, /usr/local/cuda/bin/ptxas or ptxas on PATH; empty when none exists.
inline std::string find_ptxas() {
  if (const char *p = std::getenv("VACC_PTXAS")) return p;
  if (std::filesystem::exists("/usr/local/cuda/bin/ptxas")) return "/usr/local/cuda/bin/ptxas";
  if (const char *path = std::getenv("PATH")) {
    std::string s = path;
    for (size_t a = 0, b; a <= s.size(); a = b + 1) {
      b = s.find(':', a);
      if (b == std::string::npos) b = s.size();
      std::filesystem::path p = std::filesystem::path(s.substr(a, b - a)) / "ptxas";
      if (!s.substr(a, b - a).empty() && std::filesystem::exists(p)) return p.string();
    }
  }
  return "";
}

inline const char *kNoPtxas =
    "ptxas (CUDA's PTX assembler, not packaged by Debian) is not installed: set VACC_PTXAS or "
    "install the CUDA toolkit to assemble the PTX";

// The machine's GPU, or null with `why` set.
inline runtime::GpuDevice *gpu(std::string *why) {
  static std::string reason;
  static std::unique_ptr<runtime::GpuDevice> device = [] {
    try {
      return runtime::GpuDevice::open();
    } catch (const Error &e) {
      reason = e.what();
      return std::unique_ptr<runtime::GpuDevice>();
    }
  }();
  *why = reason;
  return device.get();
}

}  // namespace vacc::test
