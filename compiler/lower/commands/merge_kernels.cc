#include <map>
#include <optional>
#include <set>

#include "codegen_commands.h"
#include "footprint.h"
#include "vacc/isa/insn.h"

namespace vacc::lower {
namespace {

// Two GEMMs merge when all but their micro-ops agree.
bool same_shape(const isa::GemmCommand &a, const isa::GemmCommand &b) {
  return a.reset == b.reset && a.loop_out == b.loop_out && a.loop_in == b.loop_in &&
         a.acc == b.acc && a.inp == b.inp && a.wgt == b.wgt;
}
bool same_shape(const isa::AluCommand &a, const isa::AluCommand &b) {
  return a.op == b.op && a.loop_out == b.loop_out && a.loop_in == b.loop_in && a.dst == b.dst &&
         a.src == b.src && a.use_imm == b.use_imm && a.imm == b.imm;
}

// An ALU that issues every cycle alone (its vector operand held) and would lose that merged.
bool keeps_hold(const CodegenCommand &op, const isa::AluCommand &a, const isa::HwConfig &c) {
  return isa::alu_holds_operand(c, a.use_imm, static_cast<uint32_t>(op.uops.size()), a.src) &&
         a.loop_out * a.loop_in >= kHeldAluIterations;
}

// The ACC tiles one micro-op of an ALU command reaches through its loops.
void tiles(uint32_t base, const isa::LoopFactors &f, const isa::AluCommand &a,
           std::set<uint32_t> *out) {
  for (uint32_t i = 0; i < a.loop_out; ++i)
    for (uint32_t j = 0; j < a.loop_in; ++j) out->insert(base + i * f.out + j * f.in);
}

// Running the micro-ops of a vector ALU in one command interleaves them per loop iteration;
// that equals running them one after the other when no micro-op reads a tile another writes.
// (Same-op immediate ALUs apply the same function to each tile the same number of times, in
// any order, so they always merge.)
class AluGroup {
 public:
  explicit AluGroup(const isa::AluCommand &a) : a_(a) {}
  bool admits(const isa::Uop &u) const {
    if (a_.use_imm) return true;
    std::set<uint32_t> d, s;
    tiles(u.dst, a_.dst, a_, &d);
    tiles(u.src, a_.src, a_, &s);
    for (uint32_t t : d)
      if (src_.count(t)) return false;
    for (uint32_t t : s)
      if (dst_.count(t) || d.count(t)) return false;
    return true;
  }
  void add(const isa::Uop &u) {
    if (a_.use_imm) return;
    tiles(u.dst, a_.dst, a_, &dst_);
    tiles(u.src, a_.src, a_, &src_);
  }

 private:
  isa::AluCommand a_;
  std::set<uint32_t> dst_, src_;
};

// The union of the scratchpad ranges a group of merged GEMMs touches, per memory.
struct GemmGroup {
  std::map<int, std::pair<uint64_t, uint64_t>> span;
  void add(const Footprint &f) {
    for (const Range &r : f.ranges) {
      auto [it, fresh] = span.emplace(r.mem, std::make_pair(r.lo, r.hi));
      if (!fresh)
        it->second = {std::min(it->second.first, r.lo), std::max(it->second.second, r.hi)};
    }
  }
  bool touches(const Footprint &f) const {
    for (const Range &r : f.ranges) {
      auto it = span.find(r.mem);
      if (it != span.end() && r.lo < it->second.second && it->second.first < r.hi) return true;
    }
    return false;
  }
};

// The ACC bank every ACC range of `op` lies in, or -1 where it touches none or both.
int acc_bank_of(const CodegenCommand &op, const isa::HwConfig &config) {
  int bank = -1;
  for (const Range &r : footprint(op).ranges) {
    if (r.mem != static_cast<int>(isa::MemId::kAcc) || r.lo >= r.hi) continue;
    const int lo = config.acc_bank(r.lo), hi = config.acc_bank(r.hi - 1);
    if (lo != hi || (bank >= 0 && bank != lo)) return -1;
    bank = lo;
  }
  return bank;
}

}  // namespace

CodegenCommands merge_reductions(const CodegenCommands &ops, uint32_t max_uops) {
  CodegenCommands out;
  out.reserve(ops.size());
  GemmGroup group;
  for (const CodegenCommand &op : ops) {
    CodegenCommand *last = out.empty() ? nullptr : &out.back();
    const auto *g = std::get_if<isa::GemmCommand>(&op.cmd);
    const auto *lg = last ? std::get_if<isa::GemmCommand>(&last->cmd) : nullptr;
    const Footprint f = footprint(op);
    if (g && lg && !g->reset && same_shape(*g, *lg) && group.touches(f) &&
        last->uops.size() + op.uops.size() <= max_uops) {
      last->uops.insert(last->uops.end(), op.uops.begin(), op.uops.end());
      group.add(f);
      continue;
    }
    out.push_back(op);
    group = {};
    if (g) group.add(f);
  }
  return out;
}

CodegenCommands merge_kernels(const CodegenCommands &ops, uint32_t max_uops,
                              const isa::HwConfig &config, bool by_bank) {
  CodegenCommands out;
  out.reserve(ops.size());
  std::optional<AluGroup> group;
  for (const CodegenCommand &op : ops) {
    CodegenCommand *last = out.empty() ? nullptr : &out.back();
    if (last && last->uops.size() + op.uops.size() <= max_uops &&
        (!by_bank || acc_bank_of(*last, config) == acc_bank_of(op, config))) {
      const auto *g = std::get_if<isa::GemmCommand>(&op.cmd);
      const auto *lg = std::get_if<isa::GemmCommand>(&last->cmd);
      if (g && lg && same_shape(*g, *lg)) {
        last->uops.insert(last->uops.end(), op.uops.begin(), op.uops.end());
        continue;
      }
      const auto *a = std::get_if<isa::AluCommand>(&op.cmd);
      const auto *la = std::get_if<isa::AluCommand>(&last->cmd);
      if (a && la && same_shape(*a, *la) && group && !keeps_hold(op, *a, config) &&
          !keeps_hold(*last, *la, config)) {
        bool ok = true;
        for (const isa::Uop &u : op.uops) ok = ok && group->admits(u);
        if (ok) {
          for (const isa::Uop &u : op.uops) group->add(u);
          last->uops.insert(last->uops.end(), op.uops.begin(), op.uops.end());
          continue;
        }
      }
    }
    out.push_back(op);
    group.reset();
    if (const auto *a = std::get_if<isa::AluCommand>(&op.cmd)) {
      group.emplace(*a);
      for (const isa::Uop &u : op.uops) group->add(u);
    }
  }
  return out;
}

}  // namespace vacc::lower
