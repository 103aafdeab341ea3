// The YAML config reader and validator, then every quantity derived from an accepted config
// (depths, field widths, the instruction and micro-op layouts, the ISA fingerprint).
#include "fuzz_targets.h"
#include "vacc/isa/config.h"
#include "vacc/isa/encoding.h"
#include "vacc/isa/insn.h"

namespace vacc::fuzz {

void fuzz_config(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  const isa::HwConfig c = isa::parse_config(text, "fuzz.yaml");
  for (int m = 0; m < isa::kNumMemIds; ++m) c.depth(static_cast<isa::MemId>(m));
  c.uop_src_bits();
  c.isa_fingerprint();
  c.peak_gops();
  isa::uop_fields(c);
  for (isa::Opcode op : {isa::Opcode::kLoad, isa::Opcode::kStore, isa::Opcode::kGemm,
                         isa::Opcode::kAlu, isa::Opcode::kFinish})
    isa::insn_fields(c, op);
}

}  // namespace vacc::fuzz
