// A program file executed on fsim, whatever config it claims to be built for (the default
// config decodes it), with a small operation limit so that no input runs long.
#include "fuzz_targets.h"
#include "vacc/isa/program.h"
#include "vacc/simulator/fsim.h"

namespace vacc::fuzz {

void fuzz_fsim(const uint8_t *data, size_t size) {
  isa::Program program =
      isa::parse_program(std::string_view(reinterpret_cast<const char *>(data), size), "fuzz");
  // 50 000 operations: a GEMM micro-op on a 16x16 tile costs about 6 us under ASan at -O1, so
  // a program of legitimate work stays well under the one-second hang bound (200 000 did not).
  sim::Fsim fsim(default_config(), sim::FsimOptions{.op_limit = 50'000});
  fsim.run(program.dram, program.insn_offset, program.insn_count);
}

}  // namespace vacc::fuzz
