#include "vacc/sweep/energy.h"

#include "vacc/support/file.h"
#include "vacc/sweep/resources.h"

namespace vacc::sweep {

const std::vector<std::string> &energy_coefficient_names() {
  static const std::vector<std::string> names = {"mac_acc32_pj",     "mac_acc16_pj",
                                                 "alu_acc32_op_pj",  "alu_acc16_op_pj",
                                                 "dram_pj_per_byte", "leakage_mw_per_mm2"};
  return names;
}

const std::vector<std::string> &energy_curve_names() {
  static const std::vector<std::string> names = {"sram_pj_per_byte_by_kib"};
  return names;
}

CoefficientTable load_energy_table(const std::string &path) {
  return parse_coefficients(read_file(path, "energy table"), path, energy_coefficient_names(),
                            energy_curve_names());
}

std::string default_energy_table() {
  return isa::resolve_config_path("energy/45nm");
}

EnergyBreakdown &operator+=(EnergyBreakdown &a, const EnergyBreakdown &b) {
  a.mac += b.mac;
  a.alu += b.alu;
  a.sram += b.sram;
  a.dram += b.dram;
  a.leakage += b.leakage;
  for (const auto &[k, v] : b.sram_by_memory) a.sram_by_memory[k] += v;
  return a;
}

EnergyBreakdown estimate_energy(const isa::HwConfig &c,
                                const std::map<std::string, uint64_t> &counters, double area_mm2,
                                const CoefficientTable &t) {
  auto count = [&](const char *name) -> double {
    auto it = counters.find(name);
    return it == counters.end() ? 0.0 : static_cast<double>(it->second);
  };
  const bool acc32 = c.acc_bits > 16;
  EnergyBreakdown e;
  const double macs = count("macs");
  e.mac = macs * t.get(acc32 ? "mac_acc32_pj" : "mac_acc16_pj");
  const double alu_ops = count("alu_ops");
  e.alu = alu_ops * t.get(acc32 ? "alu_acc32_op_pj" : "alu_acc16_op_pj");

  const double mac_uops = macs / static_cast<double>(c.peak_macs_per_cycle());
  const double gemm_uops = count("gemm_uops");
  const double alu_steps = alu_ops / (static_cast<double>(c.batch) * c.block_out);
  const double acc_tile = c.acc_tile_bytes();
  int acc_copies = 0, uop_copies = 0;
  for (const RtlMemory &m : rtl_memories(c)) {
    if (m.name == "acc") acc_copies = m.copies / 2;  // two banks, each kept `copies / 2` times
    if (m.name == "uop") uop_copies = m.copies;
  }
  // A store reads its ACC tiles whether it writes OUT or, STORE INP, the INP scratchpad.
  const double store_acc_reads =
      (count("store_bytes_out") + count("store_bytes_inp")) * c.acc_bits / c.out_bits();
  // Bytes moved per scratchpad, and the KiB of one 64-bit bank of it (its depth x 8 bytes):
  // a wide scratchpad is many 64-bit banks read side by side, so a byte costs what it costs
  // in one bank, not in an SRAM of the whole size.
  const double uop_depth = c.uop_depth(), acc_bank_depth = c.acc_bank_depth();
  const std::map<std::string, std::pair<double, double>> bytes_and_bank_kib = {
      {"inp",
       {mac_uops * c.inp_tile_bytes() + count("load_bytes_inp") + count("store_bytes_inp"),
        c.inp_depth() / 128.0}},
      {"wgt", {mac_uops * c.wgt_tile_bytes() + count("load_bytes_wgt"), c.wgt_depth() / 128.0}},
      {"acc",
       {(mac_uops + alu_steps) * acc_tile + store_acc_reads +
            acc_copies * ((gemm_uops + alu_steps) * acc_tile + count("load_bytes_acc")),
        acc_bank_depth / 128.0}},
      {"uop",
       {(gemm_uops + alu_steps) * c.uop_bytes() + uop_copies * count("load_bytes_uop"),
        uop_depth / 128.0}},
  };
  for (const auto &[name, bk] : bytes_and_bank_kib) {
    const double pj = bk.first * t.interpolate("sram_pj_per_byte_by_kib", bk.second);
    e.sram_by_memory[name] = pj;
    e.sram += pj;
  }
  e.dram = (count("dram_read_bytes") + count("dram_write_bytes")) * t.get("dram_pj_per_byte");
  // mW/mm² x mm² x s = mJ; 1 mJ = 1e9 pJ.
  const double seconds = count("cycles") / (c.clock_mhz * 1e6);
  e.leakage = t.get("leakage_mw_per_mm2") * area_mm2 * seconds * 1e9;
  return e;
}

}  // namespace vacc::sweep
