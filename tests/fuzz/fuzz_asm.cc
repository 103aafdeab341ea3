// The assembler on arbitrary text; an assembled program is also disassembled and assembled
// again, which must give the same bytes (isa/assembly.h's promise).
#include <cstdio>
#include <cstdlib>

#include "fuzz_targets.h"
#include "vacc/isa/assembly.h"
#include "vacc/support/limits.h"

namespace vacc::fuzz {

namespace {

// A smaller region bound than the other targets' 1 MiB: a `.region` line of a few bytes can
// claim a region of that size, and its disassembly (one `.data` line per 16 bytes) and second
// assembly take about a second under ASan at 1 MiB: past the hang bound, though it is the
// expected linear cost. 64 KiB keeps every bound check reachable (the fuzzer can still claim
// more and meet the refusal) at a twentieth of the time.
class RegionBound {
 public:
  RegionBound() : saved_(max_tensor_bytes()) { set_max_tensor_bytes(uint64_t{64} << 10); }
  ~RegionBound() { set_max_tensor_bytes(saved_); }
  RegionBound(const RegionBound &) = delete;
  RegionBound &operator=(const RegionBound &) = delete;

 private:
  uint64_t saved_;
};

}  // namespace

void fuzz_asm(const uint8_t *data, size_t size) {
  const RegionBound bound;
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
