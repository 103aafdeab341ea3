// The model kit: every source a Verilated model of vacc_top needs beyond Verilator itself,
// embedded into vacc when it is built (cmake/embed_kit.cmake): hw/rtl's SystemVerilog in
// compile order, and the C++ harness a model library compiles (RtlCore, the model interface,
// the AXI4 memory model, vacc's error helpers, the ModelEntry template). A model built on
// demand (model_build.h) is thus built from exactly the sources this binary was built from,
// and an installed vacc needs no source tree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vacc::sim {

struct KitFile {
  const char *path;  // relative to the source tree, e.g. "hw/rtl/vacc_top.sv"
  const char *text;
  bool rtl;  // SystemVerilog (else C++ harness)
};

// Every file of the kit, RTL first in compile order (generated: model_kit_files.cc).
const std::vector<KitFile> &model_kit_files();

// A hash of every kit file's path and text.
uint64_t model_kit_hash();

// The text of one kit file (asking for one the kit lacks is a vacc bug).
const char *model_kit_text(const std::string &path);

// Writes every kit file under `dir` at its relative path.
void write_model_kit(const std::string &dir);

}  // namespace vacc::sim
