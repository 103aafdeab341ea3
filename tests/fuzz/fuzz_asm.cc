// The assembler on arbitrary text; an assembled program is also disassembled and assembled
// again, which must give the same bytes (isa/assembly.h's promise).
#include <cstdio>
#include <cstdlib>

#include "fuzz_targets.h"
#include "vacc/isa/assembly.h"

namespace vacc::fuzz {

void fuzz_asm(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  const isa::Program program = isa::assemble(default_config(), text, "fuzz.s");
  const std::string again = isa::disassemble(default_config(), program);
  const isa::Program reassembled = isa::assemble(default_config(), again, "disassembly");
  if (reassembled.dram != program.dram || reassembled.insn_offset != program.insn_offset ||
      reassembled.insn_count != program.insn_count) {
    std::fprintf(stderr, "disassembly does not assemble to the same program:\n%s\n", again.c_str());
    std::abort();
  }
}

}  // namespace vacc::fuzz
