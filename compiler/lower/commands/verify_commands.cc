// The command-list verifier, run between the command passes (as tir::verify between loop-IR
// passes). A failure is a compiler bug. It checks what the passes must keep:
//   - every GEMM/ALU has micro-ops and every DMA moves at least one tile;
//   - every scratchpad range a command touches lies inside its scratchpad;
//   - every token queue pops no more than it pushes, and ends balanced;
//   - once the stream has tokens, every two commands of neighbouring engines that touch one
//     scratchpad tile (one of them writing) are ordered by a token pushed after the first and
//     popped before the second, in the order the hardware pairs them (the k-th pop receives the
//     k-th push), as the loop-IR interpreter checks the IR's tokens.
#include <fmt/format.h>

#include <array>

#include "codegen_commands.h"
#include "footprint.h"
#include "vacc/support/error.h"

namespace vacc::lower {
namespace {

constexpr int kEngines = 3;

int idx(Engine e) {
  return static_cast<int>(e);
}

struct Access {
  int engine = -1;                          // -1: none
  std::array<uint64_t, kEngines> pushed{};  // tokens the engine had pushed to each engine
};

struct Tile {
  Access write;
  std::array<Access, kEngines> reads;
};

uint64_t depth_of(int mem, const isa::HwConfig &c) {
  switch (static_cast<isa::MemId>(mem)) {
    case isa::MemId::kInp:
      return c.inp_depth();
    case isa::MemId::kWgt:
      return c.wgt_depth();
    case isa::MemId::kAcc:
      return c.acc_depth();
    case isa::MemId::kUop:
      return c.uop_depth();
    default:
      return 0;
  }
}

}  // namespace

void verify_commands(const CodegenCommands &ops, const isa::HwConfig &config,
                     const std::string &where) {
  std::array<std::array<uint64_t, kEngines>, kEngines> pushes{}, pops{};  // [from][to]
  bool tokens = false;
  for (const CodegenCommand &op : ops)
    if (std::holds_alternative<isa::DepCommand>(op.cmd)) tokens = true;
  std::array<std::vector<Tile>, 8> tiles;
  for (size_t i = 0; i < ops.size(); ++i) {
    const CodegenCommand &op = ops[i];
    if (const auto *d = std::get_if<isa::DepCommand>(&op.cmd)) {
      const int f = idx(d->from), t = idx(d->to);
      if (d->push) {
        ++pushes[f][t];
      } else {
        VACC_CHECK(pops[f][t] < pushes[f][t])
            << where << ": command " << i << " pops a token from " << isa::engine_name(d->from)
            << " to " << isa::engine_name(d->to) << " that was never pushed";
        ++pops[f][t];
      }
      continue;
    }
    if (std::holds_alternative<isa::GemmCommand>(op.cmd) ||
        std::holds_alternative<isa::AluCommand>(op.cmd)) {
      VACC_CHECK(!op.uops.empty()) << where << ": command " << i << " has no micro-ops";
    }
    if (const auto *d = std::get_if<isa::DmaCommand>(&op.cmd)) {
      VACC_CHECK(d->x > 0 && d->y > 0) << where << ": DMA command " << i << " moves nothing";
    }
    const Footprint fp = footprint(op);
    const int e = idx(fp.engine);
    for (const Range &r : fp.ranges) {
      const uint64_t depth = depth_of(r.mem, config);
      VACC_CHECK(r.hi <= depth) << where << ": command " << i << " reaches entry " << r.hi - 1
                                << " of a scratchpad of " << depth;
      if (!tokens) continue;
      auto &mem = tiles[static_cast<size_t>(r.mem)];
      if (mem.size() < r.hi) mem.resize(r.hi);
      // `a` (by another engine) must be covered by a token that engine pushed after it.
      auto ordered = [&](const Access &a, const char *what) {
        if (a.engine < 0 || a.engine == e) return;
        VACC_CHECK(pops[a.engine][e] > a.pushed[e])
            << where << ": command " << i << " (" << isa::engine_name(fp.engine)
            << ") touches a tile " << what << " by the "
            << isa::engine_name(static_cast<Engine>(a.engine))
            << " engine with no dependency token in between";
      };
      for (uint64_t t = r.lo; t < r.hi; ++t) {
        Tile &tile = mem[t];
        ordered(tile.write, "written");
        if (r.write) {
          for (const Access &a : tile.reads) ordered(a, "read");
          tile.write = {e, pushes[e]};
          tile.reads = {};
        } else {
          tile.reads[e] = {e, pushes[e]};
        }
      }
    }
  }
  for (int f = 0; f < kEngines; ++f)
    for (int t = 0; t < kEngines; ++t)
      VACC_CHECK(pops[f][t] <= pushes[f][t]) << where << ": unbalanced tokens";
}

}  // namespace vacc::lower
