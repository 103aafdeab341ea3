// While the pipeline fills, the GEMM core waits for the loads of the first reduction steps, and
// a merged GEMM waits for all the loads of its step: for the layer's widest steps that is most
// of a step (e.g. 288 weight tiles). This pass splits the first kFillSteps GEMMs on each
// accumulator (the first steps of each virtual thread) into one GEMM per load they read from,
// in load order, so the core starts after the first load and follows the rest. A GEMM's
// micro-ops accumulate into ACC in any order with the same result, so the parts compute what
// the whole did.
#include <map>

#include "codegen_commands.h"
#include "footprint.h"

namespace vacc::lower {
namespace {

constexpr size_t kLoadLookback = 512;  // loads looked back at per micro-op
constexpr int kFillSteps = 2;    // GEMMs split per accumulator

// The ACC ranges GEMMs have written so far, each with how many GEMMs wrote it.
class AccumulatorUse {
 public:
  // Counts a GEMM writing `acc`; returns how many earlier GEMMs wrote an overlapping range.
  int count(const Range &acc) {
    int before = 0;
    for (auto &[r, n] : uses_)
      if (overlaps(r, acc)) before += n;
    for (auto &[r, n] : uses_)
      if (r.lo == acc.lo && r.hi == acc.hi) {
        ++n;
        return before;
      }
    uses_.emplace_back(acc, 1);
    return before;
  }

 private:
  std::vector<std::pair<Range, int>> uses_;
};

}  // namespace

CodegenCommands split_first_gemms(const CodegenCommands &ops) {
  CodegenCommands out;
  out.reserve(ops.size());
  AccumulatorUse accumulators;
  std::vector<Footprint> loads;  // the operand loads so far, in stream order
  for (const CodegenCommand &op : ops) {
    const auto *g = std::get_if<isa::GemmCommand>(&op.cmd);
    if (is_operand_load(op)) loads.push_back(footprint(op));
    if (!g || g->reset) {
      out.push_back(op);
      continue;
    }
    int before = 0;  // earlier GEMMs on this accumulator
    for (const Range &r : footprint(op).ranges)
      if (r.mem == static_cast<int>(isa::MemId::kAcc)) before += accumulators.count(r);
    if (before >= kFillSteps || op.uops.size() < 2) {
      out.push_back(op);
      continue;
    }
    // Each micro-op's last load (its position among `loads`, or -1), then one GEMM per load.
    std::map<int64_t, isa::UopKernel> parts;
    for (const isa::Uop &u : op.uops) {
      const Footprint uf = footprint(CodegenCommand{op.cmd, {u}});
      int64_t last = -1;
      for (size_t k = loads.size(), n = 0; k-- > 0 && n < kLoadLookback; ++n)
        if (conflict(loads[k], uf)) {
          last = static_cast<int64_t>(k);
          break;
        }
      parts[last].push_back(u);
    }
    for (auto &[load, uops] : parts) out.push_back(CodegenCommand{op.cmd, std::move(uops)});
  }
  return out;
}

}  // namespace vacc::lower
