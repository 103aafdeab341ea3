#include "vacc/sweep/area.h"

#include "vacc/support/file.h"

namespace vacc::sweep {

const std::vector<std::string> &area_coefficient_names() {
  static const std::vector<std::string> names = {"mult8_um2",
                                                 "mult16_um2",
                                                 "mult32_um2",
                                                 "add16_um2",
                                                 "add32_um2",
                                                 "sram_bitcell_um2",
                                                 "sram_array_efficiency",
                                                 "sram_column_um2",
                                                 "sram_row_um2",
                                                 "dff_um2",
                                                 "and2_um2",
                                                 "placement_utilization"};
  return names;
}

CoefficientTable load_area_table(const std::string &path) {
  return parse_coefficients(read_file(path, "area table"), path, area_coefficient_names());
}

std::string default_area_table() {
  return isa::resolve_config_path("area/45nm");
}

AreaBreakdown estimate_area(const isa::HwConfig &c, const Resources &resources,
                            const CoefficientTable &t) {
  constexpr double kUm2PerMm2 = 1e6;
  const bool acc32 = c.acc_bits > 16;
  const double add = t.get(acc32 ? "add32_um2" : "add16_um2");
  const double mult = t.get(acc32 ? "mult32_um2" : "mult16_um2");
  AreaBreakdown a;
  a.mac_array =
      static_cast<double>(c.peak_macs_per_cycle()) * (t.get("mult8_um2") + add) / kUm2PerMm2;
  // GEMM assign (extensions.gemm_assign): a gate on each accumulator bit the adders read.
  if (c.gemm_assign)
    a.mac_array +=
        static_cast<double>(c.batch) * c.block_out * c.acc_bits * t.get("and2_um2") / kUm2PerMm2;
  // Per lane: the multiplier, three adder-sized units (add, shifter, min/max); CLIP
  // (extensions.alu_clip) or SHR_CLIP (extensions.alu_shr_clip) adds two comparators, which
  // the two share (the multiplexer in front of them is left out).
  a.alu = static_cast<double>(c.batch) * c.block_out *
          (mult + (c.alu_clip || c.alu_shr_clip ? 5 : 3) * add) / kUm2PerMm2;
  const double cell = t.get("sram_bitcell_um2") / t.get("sram_array_efficiency");
  for (const RtlMemory &m : rtl_memories(c)) {
    const double one = static_cast<double>(m.width) * static_cast<double>(m.depth) * cell +
                       static_cast<double>(m.width) * t.get("sram_column_um2") +
                       static_cast<double>(m.depth) * t.get("sram_row_um2");
    const double mm2 = m.copies * one / kUm2PerMm2;
    a.sram_by_memory[m.name] += mm2;
    a.sram += mm2;
  }
  // STORE INP (extensions.store_inp): a 2:1 multiplexer (an AND-OR, three AND2s) on each bit
  // of INP's write data and address in front of the scratchpad (its counters are registers).
  if (c.store_inp) {
    const double bits = static_cast<double>(c.inp_tile_bytes()) * 8 + c.inp_index_bits();
    const double mm2 = bits * 3 * t.get("and2_um2") / kUm2PerMm2;
    a.sram_by_memory["inp"] += mm2;
    a.sram += mm2;
  }
  a.registers = resources.ff * t.get("dff_um2") / kUm2PerMm2;
  a.total = (a.mac_array + a.alu + a.sram + a.registers) / t.get("placement_utilization");
  return a;
}

}  // namespace vacc::sweep
