// While the pipeline fills, the GEMM core waits for the loads of the first reduction step, and
// a merged GEMM waits for all of them: for the layer's widest steps that is most of a step
// (e.g. 288 weight tiles). This pass splits the first GEMM on each accumulator (the first
// step of each virtual thread) into one GEMM per load it reads from, in load order, so the
// core starts after the first load and follows the rest. A GEMM's micro-ops accumulate into
// ACC in any order with the same result, so the parts compute what the whole did.
#include <map>

#include "footprint.h"
#include "ops_list.h"

namespace vacc::codegen::accel {
namespace {

constexpr size_t kWindow = 512;  // loads looked back at per micro-op
constexpr int kFillSteps = 2;    // GEMMs split per accumulator

bool is_operand_load(const Op &op) {
  const auto *d = std::get_if<isa::DmaCommand>(&op.cmd);
  return d && !d->store && (d->mem == isa::MemId::kInp || d->mem == isa::MemId::kWgt);
}

bool overlaps(const Range &a, const Range &b) {
  return a.mem == b.mem && a.lo < b.hi && b.lo < a.hi;
}

}  // namespace

OpList split_first_gemms(const OpList &ops) {
  OpList out;
  out.reserve(ops.size());
  std::vector<Range> accumulated;  // ACC ranges some earlier GEMM wrote
  std::vector<size_t> loads;       // indices in `out` of the operand loads so far
  for (const Op &op : ops) {
    const auto *g = std::get_if<isa::GemmCommand>(&op.cmd);
    if (is_operand_load(op)) loads.push_back(out.size());
    if (!g || g->reset) {
      out.push_back(op);
      continue;
    }
    const Footprint f = footprint(op);
    int before = 0;  // earlier GEMMs on this accumulator
    for (const Range &r : f.ranges)
      if (r.mem == static_cast<int>(isa::MemId::kAcc))
        for (const Range &a : accumulated) before += overlaps(a, r);
    for (const Range &r : f.ranges)
      if (r.mem == static_cast<int>(isa::MemId::kAcc)) accumulated.push_back(r);
    if (before >= kFillSteps || op.uops.size() < 2) {
      out.push_back(op);
      continue;
    }
    // Each micro-op's last load (its position among `loads`, or -1), then one GEMM per load.
    std::map<int64_t, isa::UopKernel> parts;
    for (const isa::Uop &u : op.uops) {
      const Footprint uf = footprint(Op{op.cmd, {u}});
      int64_t last = -1;
      for (size_t k = loads.size(), n = 0; k-- > 0 && n < kWindow; ++n)
        if (conflict(footprint(out[loads[k]]), uf)) {
          last = static_cast<int64_t>(k);
          break;
        }
      parts[last].push_back(u);
    }
    for (auto &[load, uops] : parts) out.push_back(Op{op.cmd, std::move(uops)});
  }
  return out;
}

}  // namespace vacc::codegen::accel
