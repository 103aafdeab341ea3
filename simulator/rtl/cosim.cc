#include "vacc/simulator/cosim.h"

#include <fmt/format.h>

#include <vector>

#include "vacc/isa/registers.h"
#include "vacc/progen/out_of_range.h"
#include "vacc/progen/progen.h"
#include "vacc/simulator/fsim.h"
#include "vacc/support/error.h"

namespace vacc::sim {
namespace {

std::string where(const isa::HwConfig &config, const isa::Program &program, uint64_t offset) {
  for (const isa::Region &r : program.regions) {
    if (offset >= r.offset && offset < r.offset + r.bytes) {
      const uint64_t size = static_cast<uint64_t>(config.tile_bytes(r.mem));
      return fmt::format("region '{}' ({}), element {}, byte {}", r.name,
                         isa::mem_id_name(r.mem), (offset - r.offset) / size,
                         (offset - r.offset) % size);
    }
  }
  return "outside every region";
}

}  // namespace

CosimOutcome cosim_program(const isa::HwConfig &config, RtlSim &rtl, const isa::Program &program,
                           const std::string &label) {
  CosimOutcome outcome;
  std::vector<uint8_t> expect = program.dram;
  try {
    Fsim fsim(config);
    fsim.run(expect, program.insn_offset, program.insn_count);
  } catch (const Error &e) {
    outcome.message = fmt::format("{}: fsim rejected the program: {}", label, e.what());
    return outcome;
  }
  std::vector<uint8_t> got = program.dram;
  try {
    rtl.run(got, program.insn_offset, program.insn_count);
    outcome.rtl_cycles = rtl.counters().at("cycles");
  } catch (const Error &e) {
    outcome.message = fmt::format("{}: rtl failed: {}", label, e.what());
    return outcome;
  }
  uint64_t first = got.size(), count = 0;
  for (uint64_t i = 0; i < got.size(); ++i) {
    if (got[i] != expect[i]) {
      if (first == got.size()) first = i;
      ++count;
    }
  }
  if (count == 0) {
    outcome.ok = true;
    return outcome;
  }
  outcome.message = fmt::format(
      "{}: DRAM differs in {} byte(s); first at offset {:#x} ({}): fsim {:#04x}, rtl {:#04x}",
      label, count, first, where(config, program, first), expect[first], got[first]);
  return outcome;
}

CosimOutcome cosim_seed(const isa::HwConfig &config, RtlSim &rtl, uint64_t seed) {
  const isa::Program program = progen::generate_program(config, seed);
  return cosim_program(
      config, rtl, program,
      fmt::format("{} (reproduce: vacc fuzz-cosim --config {} --start {} --seeds 1)",
                  progen::describe_program(config, seed), config.name, seed));
}

CosimOutcome cosim_out_of_range_seed(const isa::HwConfig &config, RtlSim &rtl, uint64_t seed) {
  const progen::OutOfRangeProgram broken = progen::out_of_range_program(config, seed);
  const isa::Program &p = broken.program;
  const std::string label = fmt::format(
      "{}; {} (reproduce: vacc fuzz-cosim --config {} --out-of-range --start {} "
      "--seeds 1)",
      progen::describe_program(config, seed), broken.what, config.name, seed);
  const std::string names = fmt::format("instruction {} (", broken.index);
  CosimOutcome outcome;
  std::vector<uint8_t> dram = p.dram;
  try {
    Fsim(config).run(dram, p.insn_offset, p.insn_count);
    outcome.message = fmt::format("{}: fsim ran it without an error", label);
    return outcome;
  } catch (const Error &e) {
    if (std::string(e.what()).find(names) == std::string::npos) {
      outcome.message =
          fmt::format("{}: fsim's error names another instruction: {}", label, e.what());
      return outcome;
    }
  }
  dram = p.dram;
  try {
    rtl.run(dram, p.insn_offset, p.insn_count);
    outcome.message = fmt::format("{}: rtl ran it without an error", label);
    return outcome;
  } catch (const Error &e) {
    const uint32_t status = rtl.read_register(isa::reg::kErrorStatus);
    const uint32_t index = rtl.read_register(isa::reg::kErrorInsn);
    if (std::string(e.what()).find(names) == std::string::npos ||
        !(status & isa::reg::kErrorRange) || index != broken.index) {
      outcome.message = fmt::format("{}: rtl's error (status {:#x}, instruction {}): {}", label,
                                    status, index, e.what());
      return outcome;
    }
  }
  outcome.rtl_cycles = rtl.counters().at("cycles");
  outcome.ok = true;
  return outcome;
}

}  // namespace vacc::sim
