#include "vacc/progen/progen.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <vector>

#include "vacc/isa/insn.h"
#include "vacc/support/error.h"

namespace vacc::progen {
namespace {

using isa::MemId;

// Region sizes in elements; small enough that a program runs in a few thousand cycles.
constexpr uint32_t kInpRegion = 128;
constexpr uint32_t kWgtRegion = 48;
constexpr uint32_t kAccRegion = 64;
constexpr uint32_t kOutChunk = 64;  // DRAM OUT elements per iteration

class Generator {
 public:
  Generator(const isa::HwConfig &config, uint64_t seed)
      : c_(config), rng_(seed * 0x9E3779B97F4A7C15ull + 0x1234567ull), b_(config) {
    iterations_ = rnd(1, 5);
    slots_ = coin(0.6) ? 2 : 1;
    iw_ = std::min<uint32_t>(static_cast<uint32_t>(c_.inp_depth()) / slots_, 64);
    ww_ = std::min<uint32_t>(static_cast<uint32_t>(c_.wgt_depth()) / slots_, 24);
    aw_ = std::min<uint32_t>(static_cast<uint32_t>(c_.acc_depth()) / slots_, 48);
    VACC_CHECK(iw_ >= 1 && ww_ >= 1 && aw_ >= 1);
    // Overlap mode: every slot's ACC window has a part in each ACC bank, a stage's micro-ops
    // come in one LOAD UOP, and GEMM/ALU get the overlap flag wherever the rule allows it.
    overlap_ = coin(0.5);
    if (overlap_) aw_ = std::min<uint32_t>(aw_, static_cast<uint32_t>(c_.acc_bank_depth()) / slots_);
  }

  bool overlap_mode() const { return overlap_; }

  int iterations() const { return iterations_; }
  int slots() const { return slots_; }

  isa::Program generate() {
    inp_first_ = region("inp", isa::RegionKind::kInput, MemId::kInp, kInpRegion);
    wgt_first_ = region("wgt", isa::RegionKind::kWeight, MemId::kWgt, kWgtRegion);
    acc_first_ = region("acc", isa::RegionKind::kInput, MemId::kAcc, kAccRegion);
    out_first_ = b_.add_region("out", isa::RegionKind::kOutput, MemId::kOut,
                               uint64_t{kOutChunk} * iterations_);
    uop_first_ = b_.uop_region_base();
    for (int k = 0; k < iterations_; ++k) {
      std::vector<isa::Insn> loads = load_stage(k);
      std::vector<isa::Insn> computes = compute_stage(k);
      std::vector<isa::Insn> stores = store_stage(k);
      // Tokens (see progen.h): pops on the first instruction of a stage, pushes on the last.
      isa::deps_of(loads.front()).pop_next = k >= slots_;
      isa::deps_of(loads.back()).push_next = true;
      isa::deps_of(computes.front()).pop_prev = true;
      isa::deps_of(computes.front()).pop_next = k >= slots_;
      isa::deps_of(computes.back()).push_prev = k + slots_ < iterations_;
      isa::deps_of(computes.back()).push_next = true;
      isa::deps_of(stores.front()).pop_prev = true;
      isa::deps_of(stores.back()).push_prev = k + slots_ < iterations_ || k == iterations_ - 1;
      if (overlap_) flag_overlaps(computes);
      for (auto *stage : {&loads, &computes, &stores})
        for (const isa::Insn &insn : *stage) b_.emit(insn);
    }
    isa::FinishInsn finish;
    finish.deps.pop_next = true;  // the last store's token
    b_.emit(finish);
    return b_.finish();
  }

 private:
  int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin(double p) { return std::bernoulli_distribution(p)(rng_); }

  // Overlap mode: sets the overlap flag on most GEMMs/ALUs (each stays inside one part of the
  // ACC window, so inside one bank, as the flag requires: isa/README.md, "Overlap").
  void flag_overlaps(std::vector<isa::Insn> &computes) {
    for (isa::Insn &insn : computes) {
      if (auto *g = std::get_if<isa::GemmInsn>(&insn)) g->overlap = coin(0.8);
      if (auto *a = std::get_if<isa::AluInsn>(&insn)) a->overlap = coin(0.8);
    }
    // The last one pushes to the store engine, whose stores read both banks: a flagged
    // instruction's token would vouch for its own bank only.
    if (auto *g = std::get_if<isa::GemmInsn>(&computes.back())) g->overlap = false;
    if (auto *a = std::get_if<isa::AluInsn>(&computes.back())) a->overlap = false;
  }

  uint32_t region(const std::string &name, isa::RegionKind kind, MemId mem, uint32_t elements) {
    const uint32_t first = b_.add_region(name, kind, mem, elements);
    std::vector<uint8_t> bytes = b_.region_bytes(name);
    for (auto &byte : bytes) byte = static_cast<uint8_t>(rng_());
    b_.set_region_bytes(name, bytes);
    return first;
  }

  int pad() { return coin(0.35) ? rnd(1, 2) : 0; }

  // A 2D load of `mem` into [sram_base, sram_base + H*W) with H*W <= room; returns H*W.
  uint32_t load_2d(std::vector<isa::Insn> &out, MemId mem, uint32_t sram_base, uint32_t room,
                   uint32_t dram_first, uint32_t dram_elements, bool allow_pad) {
    isa::MemInsn m;
    m.opcode = isa::Opcode::kLoad;
    m.mem = mem;
    m.x_size = static_cast<uint32_t>(rnd(1, 8));
    m.y_size = static_cast<uint32_t>(rnd(1, 4));
    if (allow_pad) {
      m.pad_top = pad();
      m.pad_bottom = pad();
      m.pad_left = pad();
      m.pad_right = pad();
    }
    auto area = [&] {
      return (m.pad_top + m.y_size + m.pad_bottom) * (m.pad_left + m.x_size + m.pad_right);
    };
    while (area() > room) {  // shrink until it fits
      if (m.pad_top + m.pad_bottom + m.pad_left + m.pad_right > 0) {
        m.pad_top = m.pad_bottom = m.pad_left = m.pad_right = 0;
      } else if (m.y_size > 1) {
        --m.y_size;
      } else {
        --m.x_size;
      }
    }
    VACC_CHECK(m.x_size >= 1);
    m.x_stride = m.x_size + static_cast<uint32_t>(coin(0.5) ? rnd(0, 4) : 0);
    if ((m.y_size - 1) * m.x_stride + m.x_size > dram_elements) m.x_stride = m.x_size;
    const uint32_t span = (m.y_size - 1) * m.x_stride + m.x_size;
    VACC_CHECK(span <= dram_elements);
    m.sram_base = sram_base;
    m.dram_base = dram_first + static_cast<uint32_t>(rnd(0, static_cast<int>(dram_elements - span)));
    out.push_back(m);
    return area();
  }

  std::vector<isa::Insn> load_stage(int k) {
    std::vector<isa::Insn> out;
    const uint32_t slot = static_cast<uint32_t>(k % slots_);
    uint32_t used = 0;
    // A STORE INP of iteration k - slots_ filled the top of this slot: the loads keep below it.
    const uint32_t room = iw_ - (stored_[slot].n ? stored_[slot].window : 0);
    for (int n = rnd(1, 2); n > 0 && used < room; --n)
      used +=
          load_2d(out, MemId::kInp, slot * iw_ + used, room - used, inp_first_, kInpRegion, true);
    n_inp_ = used;
    used = 0;
    for (int n = rnd(1, 2); n > 0 && used < ww_; --n)
      used += load_2d(out, MemId::kWgt, slot * ww_ + used, ww_ - used, wgt_first_, kWgtRegion, true);
    n_wgt_ = used;
    if (coin(0.5)) std::swap(out.front(), out.back());  // order of INP and WGT loads varies
    return out;
  }

  // Loads `uops` into a random place of the UOP scratchpad; returns its first index.
  uint32_t load_uops(std::vector<isa::Insn> &out, const std::vector<isa::Uop> &uops) {
    uint32_t first = 0;
    for (size_t i = 0; i < uops.size(); ++i) {
      const uint32_t idx = b_.add_uop(uops[i]);
      if (i == 0) first = idx;
    }
    const uint32_t n = static_cast<uint32_t>(uops.size());
    isa::MemInsn m;
    m.opcode = isa::Opcode::kLoad;
    m.mem = MemId::kUop;
    m.sram_base = static_cast<uint32_t>(rnd(0, c_.uop_depth() - static_cast<int>(n)));
    m.dram_base = uop_first_ + first;
    m.y_size = 1;
    m.x_size = n;
    m.x_stride = n;
    out.push_back(m);
    return m.sram_base;
  }

  // Loop extents and factors whose largest offset stays below `n` (else factors become 0).
  isa::LoopFactors factors(uint32_t lo, uint32_t li, uint32_t n, int max_factor, uint32_t *max_off) {
    isa::LoopFactors f{static_cast<uint32_t>(rnd(0, max_factor)),
                       static_cast<uint32_t>(rnd(0, max_factor))};
    if ((lo - 1) * f.out + (li - 1) * f.in >= n) f = {0, 0};
    *max_off = (lo - 1) * f.out + (li - 1) * f.in;
    return f;
  }

  uint32_t pick(uint32_t base, uint32_t n, uint32_t max_off) {
    return base + static_cast<uint32_t>(rnd(0, static_cast<int>(n - 1 - max_off)));
  }

  // Appends a kernel: a LOAD UOP of its own, or (overlap mode) a place in the stage's one
  // LOAD UOP, whose base compute_stage adds at the end. Returns uop_begin.
  uint32_t kernel(std::vector<isa::Insn> &out, const std::vector<isa::Uop> &uops) {
    if (!overlap_) return load_uops(out, uops);
    const uint32_t at = static_cast<uint32_t>(stage_uops_.size());
    stage_uops_.insert(stage_uops_.end(), uops.begin(), uops.end());
    return at;
  }

  std::vector<isa::Insn> compute_stage(int k) {
    std::vector<isa::Insn> out;
    const uint32_t slot = static_cast<uint32_t>(k % slots_);
    const uint32_t ibase = slot * iw_, wbase = slot * ww_;
    const int parts = overlap_ ? 2 : 1;
    stage_uops_.clear();

    // Initialise each ACC window part the stage uses: a padded ACC load or a reset GEMM.
    for (int p = 0; p < parts; ++p) {
      abase_[p] = static_cast<uint32_t>(p * c_.acc_bank_depth()) + slot * aw_;
      if (coin(0.4)) {
        n_acc_[p] = load_2d(out, MemId::kAcc, abase_[p], aw_, acc_first_, kAccRegion, true);
      } else {
        n_acc_[p] = static_cast<uint32_t>(rnd(1, static_cast<int>(aw_)));
        isa::GemmInsn g;
        g.reset = true;
        g.uop_begin = kernel(out, {isa::Uop{abase_[p], ibase, wbase}});
        g.uop_end = g.uop_begin + 1;
        g.loop_out = 1;
        g.loop_in = n_acc_[p];
        g.acc = {0, 1};
        out.push_back(g);
      }
    }

    for (int ops = rnd(1, overlap_ ? 5 : 3); ops > 0; --ops) {
      const uint32_t lo = static_cast<uint32_t>(rnd(1, 3));
      const uint32_t li = static_cast<uint32_t>(rnd(1, 4));
      const int nu = rnd(1, 3);
      const int p = rnd(0, parts - 1);
      const uint32_t abase = abase_[p], n_acc = n_acc_[p];
      if (coin(0.5)) {
        isa::GemmInsn g;
        g.reset = coin(0.1);
        // extensions.gemm_assign: often products that replace the tiles (drawn only then, so
        // other configs keep their programs).
        if (c_.gemm_assign) g.assign = coin(0.3);
        g.loop_out = lo;
        g.loop_in = li;
        uint32_t ma, mi, mw;
        g.acc = factors(lo, li, n_acc, 3, &ma);
        g.inp = factors(lo, li, n_inp_, 3, &mi);
        g.wgt = factors(lo, li, n_wgt_, 2, &mw);
        // Often the inputs a STORE INP left in this slot: along one of its rows.
        const StoredInp &st = stored_[slot];
        const bool from_store = st.n && coin(0.5);
        if (from_store) g.inp = {0, li <= st.x ? 1u : 0u};
        std::vector<isa::Uop> uops;
        for (int u = 0; u < nu; ++u) {
          const uint32_t src =
              from_store
                  ? st.base +
                        static_cast<uint32_t>(rnd(0, static_cast<int>(st.y) - 1)) * st.stride +
                        static_cast<uint32_t>(rnd(0, static_cast<int>(st.x - (g.inp.in ? li : 1))))
                  : pick(ibase, n_inp_, mi);
          uops.push_back({pick(abase, n_acc, ma), src, pick(wbase, n_wgt_, mw)});
        }
        g.uop_begin = kernel(out, uops);
        g.uop_end = g.uop_begin + static_cast<uint32_t>(nu);
        out.push_back(g);
      } else {
        isa::AluInsn a;
        do {
          a.op = static_cast<isa::AluOp>(rnd(0, isa::kNumAluOps - 1));
        } while (!isa::alu_op_unavailable(c_, a.op).empty());
        a.loop_out = lo;
        a.loop_in = li;
        uint32_t md, ms;
        a.dst = factors(lo, li, n_acc, 3, &md);
        a.src = factors(lo, li, n_acc, 3, &ms);
        a.use_imm = coin(0.5);
        if (a.use_imm) {
          switch (a.op) {
            case isa::AluOp::kShr: a.imm = rnd(-40, 40); break;  // both directions, saturating
            case isa::AluOp::kMul: a.imm = rnd(-9, 9); break;
            case isa::AluOp::kClip:  // mostly ordered bounds, sometimes crossed
              a.imm = isa::clip_imm(static_cast<int32_t>(rnd(-128, 40)),
                                    static_cast<int32_t>(rnd(-40, 127)));
              break;
            default: a.imm = rnd(-32768, 32767); break;
          }
        } else if (a.op == isa::AluOp::kShrClip) {  // bounds beside the vector of shifts
          a.imm = isa::clip_imm(static_cast<int32_t>(rnd(-128, 40)),
                                static_cast<int32_t>(rnd(-40, 127)));
        }
        // With extensions.alu_hold, often a held operand: one micro-op, src the same for every
        // iteration, sometimes an index the instruction itself writes.
        int alu_nu = nu;
        bool alias = false;
        if (c_.alu_hold && !a.use_imm && coin(0.4)) {
          alu_nu = 1;
          a.src = {0, 0};
          ms = 0;
          alias = coin(0.5);
        }
        std::vector<isa::Uop> uops;
        for (int u = 0; u < alu_nu; ++u) {
          const uint32_t dst = pick(abase, n_acc, md);
          const uint32_t src =
              alias ? dst + static_cast<uint32_t>(rnd(0, static_cast<int>(lo) - 1)) * a.dst.out +
                          static_cast<uint32_t>(rnd(0, static_cast<int>(li) - 1)) * a.dst.in
                    : pick(abase, n_acc, ms);
          uops.push_back({dst, src, 0});
        }
        a.uop_begin = kernel(out, uops);
        a.uop_end = a.uop_begin + static_cast<uint32_t>(alu_nu);
        out.push_back(a);
      }
    }
    if (overlap_) {  // the stage's micro-ops in one LOAD UOP, first
      std::vector<isa::Insn> with_load;
      const uint32_t base = load_uops(with_load, stage_uops_);
      for (isa::Insn &insn : out) {
        if (auto *g = std::get_if<isa::GemmInsn>(&insn)) g->uop_begin += base, g->uop_end += base;
        if (auto *a = std::get_if<isa::AluInsn>(&insn)) a->uop_begin += base, a->uop_end += base;
      }
      out.insert(out.begin(), with_load.front());
    }
    stored_[slot] = {};  // read: the next store may fill the window again
    return out;
  }

  std::vector<isa::Insn> store_stage(int k) {
    std::vector<isa::Insn> out;
    for (int n = rnd(1, 2); n > 0; --n) {
      const int p = rnd(0, overlap_ ? 1 : 0);
      const uint32_t abase = abase_[p], n_acc = n_acc_[p];
      isa::MemInsn m;
      m.opcode = isa::Opcode::kStore;
      m.mem = MemId::kOut;
      const uint32_t off = static_cast<uint32_t>(rnd(0, static_cast<int>(n_acc - 1)));
      const uint32_t room = n_acc - off;
      m.x_size = static_cast<uint32_t>(rnd(1, static_cast<int>(std::min<uint32_t>(8, room))));
      m.y_size = static_cast<uint32_t>(
          rnd(1, static_cast<int>(std::min<uint32_t>(4, room / m.x_size))));
      m.x_stride = m.x_size + static_cast<uint32_t>(coin(0.5) ? rnd(0, 3) : 0);
      const uint32_t span = (m.y_size - 1) * m.x_stride + m.x_size;
      VACC_CHECK(span <= kOutChunk);
      m.sram_base = abase + off;
      m.dram_base = out_first_ + static_cast<uint32_t>(k) * kOutChunk +
                    static_cast<uint32_t>(rnd(0, static_cast<int>(kOutChunk - span)));
      out.push_back(m);
    }
    // extensions.store_inp: often a STORE INP of some accumulators into the top of this slot's
    // INP window, rows x_stride apart, for iteration k + slots_'s GEMMs (whose stage pops this
    // stage's token); that iteration's loads keep below the window.
    const uint32_t slot = static_cast<uint32_t>(k % slots_);
    if (c_.store_inp && iw_ >= 2 && k + slots_ < iterations_ && coin(0.6)) {
      const int p = rnd(0, overlap_ ? 1 : 0);
      const uint32_t window = iw_ / 2;
      const uint32_t off = static_cast<uint32_t>(rnd(0, static_cast<int>(n_acc_[p] - 1)));
      const uint32_t room = n_acc_[p] - off;
      isa::MemInsn m;
      m.opcode = isa::Opcode::kStore;
      m.mem = MemId::kInp;
      m.x_size = static_cast<uint32_t>(rnd(1, static_cast<int>(std::min({8u, room, window}))));
      m.y_size =
          static_cast<uint32_t>(rnd(1, static_cast<int>(std::min<uint32_t>(4, room / m.x_size))));
      m.x_stride = m.x_size + static_cast<uint32_t>(coin(0.5) ? rnd(0, 3) : 0);
      while ((m.y_size - 1) * m.x_stride + m.x_size > window) {  // shrink until it fits
        if (m.x_stride > m.x_size)
          --m.x_stride;
        else
          --m.y_size;
      }
      const uint32_t span = (m.y_size - 1) * m.x_stride + m.x_size;
      m.sram_base = abase_[p] + off;
      m.dram_base = slot * iw_ + iw_ - window +
                    static_cast<uint32_t>(rnd(0, static_cast<int>(window - span)));
      stored_[slot] = {m.dram_base, m.y_size, m.x_size, m.x_stride, m.y_size * m.x_size, window};
      out.insert(out.begin() + rnd(0, static_cast<int>(out.size())), m);
    }
    return out;
  }

  const isa::HwConfig &c_;
  std::mt19937_64 rng_;
  isa::ProgramBuilder b_;
  int iterations_ = 1;
  int slots_ = 1;
  uint32_t iw_ = 0, ww_ = 0, aw_ = 0;  // scratchpad slot sizes (elements)
  uint32_t inp_first_ = 0, wgt_first_ = 0, acc_first_ = 0, out_first_ = 0, uop_first_ = 0;
  uint32_t n_inp_ = 0, n_wgt_ = 0;  // elements initialised in the current slot
  uint32_t abase_[2] = {0, 0};      // the current slot's ACC window parts (one unless overlap_)
  uint32_t n_acc_[2] = {0, 0};      // ... and the elements initialised in each
  bool overlap_ = false;
  std::vector<isa::Uop> stage_uops_;  // overlap mode: the current stage's micro-ops
  // Per slot, the INP entries a STORE INP wrote for the slot's next iteration (n = 0: none).
  struct StoredInp {
    uint32_t base = 0, y = 0, x = 0, stride = 0, n = 0, window = 0;
  };
  StoredInp stored_[2];
};

}  // namespace

isa::Program generate_program(const isa::HwConfig &config, uint64_t seed) {
  return Generator(config, seed).generate();
}

std::string describe_program(const isa::HwConfig &config, uint64_t seed) {
  Generator g(config, seed);
  const isa::Program p = g.generate();
  return fmt::format("seed {} on config {}: {} iteration(s), {}{}, {} instructions", seed,
                     config.name, g.iterations(),
                     g.slots() == 2 ? "double-buffered" : "single-buffered",
                     g.overlap_mode() ? ", GEMM/ALU overlap" : "", p.insn_count);
}

}  // namespace vacc::progen
