// The SystemVerilog parameter package `vacc_pkg` of one accelerator config. Every parameter
// the RTL uses (GEMM shape, widths, scratchpad depths, queue depths, opcodes, and the offset
// and width of every instruction and micro-op field) is written here from isa/'s tables, so
// the RTL never restates a number by hand and decode follows insn_fields() exactly.
#pragma once

#include <string>

#include "vacc/isa/config.h"

namespace vacc::hw {

// The text of vacc_pkg.sv for `config`. Deterministic: the same config gives the same bytes.
// Throws vacc::Error when the config cannot be built by this RTL (a tile wider than one
// 4 KiB page or than a 256-beat burst, a bus narrower than 8 bits), naming the key.
std::string generate_package(const isa::HwConfig &config);

// Writes `dir`/vacc_pkg.sv (creating `dir`); leaves the file untouched when its content is
// already identical, so build systems do not rebuild. Returns the file's path.
std::string write_package(const isa::HwConfig &config, const std::string &dir);

// "sram_base" -> "SramBase": the SystemVerilog spelling of an isa field name.
std::string camel_case(const std::string &snake);

}  // namespace vacc::hw
