// Published capacities (Xilinx data sheets DS190 for Zynq-7000, DS962 for UltraScale+ Alveo).
#include "vacc/hw/parts.h"

#include <algorithm>
#include <cctype>

namespace vacc::hw {

const std::vector<FpgaPart> &known_parts() {
  static const std::vector<FpgaPart> parts = {
      {"xc7z010", "Zybo Z7-10", "xc7", 17600, 35200, 80, 60, 0},
      {"xc7z020", "PYNQ-Z1 / Zynq-7020", "xc7", 53200, 106400, 220, 140, 0},
      {"xc7z045", "ZC706", "xc7", 218600, 437200, 900, 545, 0},
      {"xczu3eg", "Ultra96", "xcup", 70560, 141120, 360, 216, 0},
      {"xczu9eg", "ZCU102", "xcup", 274080, 548160, 2520, 912, 0},
      {"xcu200", "Alveo U200", "xcup", 1182240, 2364480, 6840, 2160, 960},
      {"xcu250", "Alveo U250", "xcup", 1728000, 3456000, 12288, 2688, 1280},
  };
  return parts;
}

std::optional<FpgaPart> find_part(const std::string &name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const FpgaPart &p : known_parts()) {
    if (lower.rfind(p.name, 0) == 0) return p;
  }
  return std::nullopt;
}

}  // namespace vacc::hw
