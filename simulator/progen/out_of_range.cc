#include "vacc/progen/out_of_range.h"

#include <fmt/format.h>

#include <functional>
#include <random>
#include <vector>

#include "vacc/isa/encoding.h"
#include "vacc/isa/insn.h"
#include "vacc/progen/progen.h"
#include "vacc/support/error.h"

namespace vacc::progen {
namespace {

using isa::MemId;

uint64_t field_max(const isa::HwConfig &c, isa::Opcode op, const std::string &name) {
  for (const isa::Field &f : isa::insn_fields(c, op))
    if (f.name == name) return (uint64_t{1} << f.width) - 1;
  VACC_CHECK(false);
  return 0;
}

// One way to break an instruction; returns false when its fields cannot reach out of range.
using Breaker = std::function<bool(std::string &)>;

class Mutator {
 public:
  Mutator(const isa::HwConfig &config, uint64_t seed) : c_(config), rng_(seed ^ 0x5EEDF00Dull) {}

  // A LOAD or STORE whose tiles run past the end of its scratchpad.
  bool sram_base(isa::MemInsn &m, std::string &what) {
    const uint64_t tiles = m.opcode == isa::Opcode::kStore
                               ? uint64_t{m.y_size} * m.x_size
                               : (uint64_t{m.pad_top} + m.y_size + m.pad_bottom) *
                                     (uint64_t{m.pad_left} + m.x_size + m.pad_right);
    // A STORE reads ACC, whichever memory it writes.
    const uint64_t depth =
        static_cast<uint64_t>(c_.depth(m.opcode == isa::Opcode::kStore ? MemId::kAcc : m.mem));
    const uint64_t lowest = depth + 1 > tiles ? depth + 1 - tiles : 0;
    const uint64_t highest = field_max(c_, m.opcode, "sram_base");
    if (lowest > highest) return false;
    m.sram_base = static_cast<uint32_t>(lowest + pick(0, std::min<uint64_t>(highest - lowest, 7)));
    what = fmt::format("sram_base {} with {} tiles, depth {}", m.sram_base, tiles, depth);
    return true;
  }

  // A STORE INP whose last INP entry (dram_base + (y_size - 1) * x_stride + x_size - 1) lies
  // past the end of INP.
  bool inp_destination(isa::MemInsn &m, std::string &what) {
    if (m.y_size == 0 || m.x_size == 0) return false;
    const uint64_t span = uint64_t{m.y_size - 1} * m.x_stride + m.x_size;
    const uint64_t depth = static_cast<uint64_t>(c_.inp_depth());
    const uint64_t lowest = depth + 1 > span ? depth + 1 - span : 0;
    m.dram_base = static_cast<uint32_t>(lowest + pick(0, 7));
    what = fmt::format("dram_base {} with rows of {} tiles {} apart, INP depth {}", m.dram_base,
                       m.x_size, m.x_stride, depth);
    return true;
  }

  // A GEMM or ALU whose micro-op range ends past UOP, or begins after it ends.
  template <typename Insn>
  bool uop_range(Insn &insn, isa::Opcode op, std::string &what) {
    const uint64_t depth = static_cast<uint64_t>(c_.uop_depth());
    if (coin() && insn.uop_end + 1 <= field_max(c_, op, "uop_begin")) {
      insn.uop_begin = insn.uop_end + 1;
      what = fmt::format("uop_begin {} after uop_end {}", insn.uop_begin, insn.uop_end);
      return true;
    }
    insn.uop_end = static_cast<uint32_t>(
        depth + 1 + pick(0, std::min<uint64_t>(field_max(c_, op, "uop_end") - depth - 1, 7)));
    what = fmt::format("uop_end {}, UOP depth {}", insn.uop_end, depth);
    return true;
  }

  // A GEMM or ALU whose loop, three iterations long with a factor of depth - 1, takes one
  // operand's index past its scratchpad.
  template <typename Insn>
  bool loop_factor(Insn &insn, isa::LoopFactors &f, const char *operand, MemId mem,
                   std::string &what) {
    if (insn.uop_begin >= insn.uop_end) {
      if (insn.uop_end + 1 > static_cast<uint32_t>(c_.uop_depth())) return false;
      insn.uop_begin = insn.uop_end;
      insn.uop_end = insn.uop_begin + 1;
    }
    const uint32_t factor = static_cast<uint32_t>(c_.depth(mem) - 1);
    if (coin()) {
      insn.loop_out = 3;
      insn.loop_in = std::max<uint32_t>(insn.loop_in, 1);
      f.out = factor;
      what = fmt::format("loop_out 3, {}_factor_out {}", operand, factor);
    } else {
      insn.loop_in = 3;
      insn.loop_out = std::max<uint32_t>(insn.loop_out, 1);
      f.in = factor;
      what = fmt::format("loop_in 3, {}_factor_in {}", operand, factor);
    }
    return true;
  }

  bool mutate(isa::Insn &insn, std::string &what) {
    std::vector<Breaker> ways;
    if (auto *m = std::get_if<isa::MemInsn>(&insn)) {
      ways.push_back([this, m](std::string &w) { return sram_base(*m, w); });
      if (m->opcode == isa::Opcode::kStore && m->mem == MemId::kInp)
        ways.push_back([this, m](std::string &w) { return inp_destination(*m, w); });
    } else if (auto *g = std::get_if<isa::GemmInsn>(&insn)) {
      g->overlap = false;  // its indices leave any bank: no promise to keep
      ways.push_back([this, g](std::string &w) { return uop_range(*g, isa::Opcode::kGemm, w); });
      ways.push_back(
          [this, g](std::string &w) { return loop_factor(*g, g->acc, "acc", MemId::kAcc, w); });
      ways.push_back(
          [this, g](std::string &w) { return loop_factor(*g, g->inp, "inp", MemId::kInp, w); });
      ways.push_back(
          [this, g](std::string &w) { return loop_factor(*g, g->wgt, "wgt", MemId::kWgt, w); });
    } else if (auto *a = std::get_if<isa::AluInsn>(&insn)) {
      a->overlap = false;
      ways.push_back([this, a](std::string &w) { return uop_range(*a, isa::Opcode::kAlu, w); });
      ways.push_back(
          [this, a](std::string &w) { return loop_factor(*a, a->dst, "dst", MemId::kAcc, w); });
      ways.push_back(
          [this, a](std::string &w) { return loop_factor(*a, a->src, "src", MemId::kAcc, w); });
    }
    if (ways.empty()) return false;
    return ways[pick(0, ways.size() - 1)](what);
  }

  uint64_t pick(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }
  bool coin() { return pick(0, 1) == 1; }

 private:
  const isa::HwConfig &c_;
  std::mt19937_64 rng_;
};

}  // namespace

OutOfRangeProgram out_of_range_program(const isa::HwConfig &config, uint64_t seed) {
  OutOfRangeProgram out;
  out.program = generate_program(config, seed);
  isa::Program &p = out.program;
  Mutator mutator(config, seed);
  // Any instruction but FINISH, tried from a random one on until one breaks.
  const uint32_t n = p.insn_count;
  const uint32_t first = static_cast<uint32_t>(mutator.pick(0, n - 1));
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t index = (first + k) % n;
    uint8_t *at = p.dram.data() + p.insn_offset + uint64_t{index} * isa::kInsnBytes;
    isa::Insn insn = isa::decode(config, isa::load_word(at));
    if (!mutator.mutate(insn, out.what)) continue;
    isa::store_word(isa::encode(config, insn), at);
    out.index = index;
    out.what = fmt::format("instruction {} ({}): {}", index, isa::insn_label(insn), out.what);
    return out;
  }
  fail("progen: no instruction of seed {} can be made to reach out of range", seed);
}

}  // namespace vacc::progen
