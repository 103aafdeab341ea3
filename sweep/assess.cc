#include "vacc/sweep/assess.h"

#include <fmt/format.h>

#include "vacc/hw/parts.h"
#include "vacc/sweep/area.h"

namespace vacc::sweep {

namespace {

bool fits(const Resources &r, const hw::FpgaPart &p) {
  return r.lut <= static_cast<double>(p.luts) && r.ff <= static_cast<double>(p.ffs) &&
         r.dsp <= static_cast<double>(p.dsps) && r.bram <= static_cast<double>(p.bram36);
}

}  // namespace

void assess_hardware(PointRecord &rec, const isa::HwConfig &config, const Resources &r,
                     const std::string &source, const CoefficientTable &area_table) {
  rec.lut = r.lut;
  rec.ff = r.ff;
  rec.dsp = r.dsp;
  rec.bram = r.bram;
  rec.resources_source = source;
  const auto part = hw::find_part(config.fpga_part);
  rec.part = part ? part->name : config.fpga_part;
  rec.fits = part && fits(r, *part);
  const AreaBreakdown a = estimate_area(config, r, area_table);
  rec.area_mm2 = a.total;
  rec.area_split = {{"mac_array", a.mac_array},
                    {"alu", a.alu},
                    {"sram", a.sram},
                    {"registers", a.registers},
                    {"sram_by_memory", a.sram_by_memory}};
  rec.clock_mhz = config.clock_mhz;
  rec.peak_macs_per_cycle = config.peak_macs_per_cycle();
  rec.dram_bytes_per_cycle = config.mem_bytes_per_cycle;
}

std::optional<std::string> broken_constraint(const PointRecord &rec,
                                             const std::vector<Constraint> &constraints) {
  for (const Constraint &c : constraints) {
    if (c.kind == Constraint::Kind::kFits) {
      const auto part = hw::find_part(c.part);
      const Resources r{rec.lut, rec.ff, rec.dsp, rec.bram};
      if (!part) return fmt::format("constraint 'fits: {}': unknown part", c.part);
      if (!fits(r, *part))
        return fmt::format(
            "constraint 'fits: {}' (LUT {:.0f}/{}, FF {:.0f}/{}, DSP {:.0f}/{}, "
            "BRAM {:.1f}/{})",
            c.part, r.lut, part->luts, r.ff, part->ffs, r.dsp, part->dsps, r.bram, part->bram36);
      continue;
    }
    const double v = c.metric == "lut"    ? rec.lut
                     : c.metric == "ff"   ? rec.ff
                     : c.metric == "dsp"  ? rec.dsp
                     : c.metric == "bram" ? rec.bram
                                          : rec.area_mm2;
    if (!compare(c, v)) return fmt::format("constraint '{}' ({} {:.4g})", c.text, c.metric, v);
  }
  return std::nullopt;
}

}  // namespace vacc::sweep
