// Energy of one run from the engine's counters and an energy table (configs/energy/, every
// value with its published source; `vacc sweep --energy FILE` swaps it):
//   MACs        counters.macs x pJ per 8-bit MAC (accumulator width's adder)
//   ALU         counters.alu_ops (lane operations) x pJ per accumulator-width add
//   SRAM        bytes read and written per scratchpad x pJ/byte of one 64-bit bank of it (a
//               wide scratchpad is W/64 banks of its depth read side by side: the table's
//               SRAM size is depth x 8 bytes):
//               each GEMM micro-op reads an INP and a WGT tile and reads and writes an ACC
//               tile (a reset one only writes), each ALU step reads and writes an ACC tile,
//               GEMM and ALU steps read a micro-op, loads write their bytes, stores read ACC
//               tiles; writes to ACC and UOP go to every copy the RTL keeps
//   DRAM        counters.dram_read_bytes + dram_write_bytes x pJ/byte
//   leakage     power density x area x cycles / clock
#pragma once

#include <map>
#include <string>

#include "vacc/isa/config.h"
#include "vacc/sweep/coefficients.h"

namespace vacc::sweep {

struct EnergyBreakdown {
  double mac = 0, alu = 0, sram = 0, dram = 0, leakage = 0;  // pJ
  std::map<std::string, double> sram_by_memory;              // pJ: inp, wgt, acc, uop
  double total() const { return mac + alu + sram + dram + leakage; }
};

const std::vector<std::string> &energy_coefficient_names();
const std::vector<std::string> &energy_curve_names();
CoefficientTable load_energy_table(const std::string &path);
// configs/energy/45nm.yaml, found like a bundled config (isa::resolve_config_path).
std::string default_energy_table();

EnergyBreakdown estimate_energy(const isa::HwConfig &config,
                                const std::map<std::string, uint64_t> &counters, double area_mm2,
                                const CoefficientTable &table);

EnergyBreakdown &operator+=(EnergyBreakdown &a, const EnergyBreakdown &b);

}  // namespace vacc::sweep
