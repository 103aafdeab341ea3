#include "vacc/simulator/fsim.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>

#include "fsim_scheduler.h"
#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"

namespace vacc::sim {

namespace {

using isa::AluInsn;
using isa::AluOp;
using isa::GemmInsn;
using isa::MemId;
using isa::MemInsn;

// Wraps a value to `bits` (16 or 32) as two's complement, kept sign-extended in an int32.
inline int32_t wrap(int64_t v, int bits) {
  if (bits == 32) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int16_t>(static_cast<uint16_t>(v));
}

// acc[b][o] += sum_c inp[b][c] * wgt[o][c] for one micro-op; BlockIn is fixed for speed.
template <int BlockIn>
inline void gemm_tile(const int8_t *inp, const int8_t *wgt, int32_t *acc, int batch,
                      int block_out, int acc_bits) {
  for (int b = 0; b < batch; ++b) {
    const int8_t *x = inp + b * BlockIn;
    for (int o = 0; o < block_out; ++o) {
      const int8_t *w = wgt + o * BlockIn;
      int32_t sum = 0;
      for (int c = 0; c < BlockIn; ++c) sum += int32_t{x[c]} * int32_t{w[c]};
      int32_t &a = acc[b * block_out + o];
      a = wrap(int64_t{a} + sum, acc_bits);
    }
  }
}

inline void gemm_tile_any(const int8_t *inp, const int8_t *wgt, int32_t *acc, int batch,
                          int block_in, int block_out, int acc_bits) {
  for (int b = 0; b < batch; ++b)
    for (int o = 0; o < block_out; ++o) {
      int64_t sum = 0;
      for (int c = 0; c < block_in; ++c)
        sum += int32_t{inp[b * block_in + c]} * int32_t{wgt[o * block_in + c]};
      int32_t &a = acc[b * block_out + o];
      a = wrap(a + sum, acc_bits);
    }
}

using GemmKernel = void (*)(const int8_t *, const int8_t *, int32_t *, int, int, int);

GemmKernel pick_gemm_kernel(int block_in) {
  switch (block_in) {
    case 8: return &gemm_tile<8>;
    case 16: return &gemm_tile<16>;
    case 32: return &gemm_tile<32>;
    case 64: return &gemm_tile<64>;
    default: return nullptr;
  }
}

inline int32_t shift_right(int32_t a, int32_t b, int bits) {
  if (b >= 0) return a >> std::min(b, bits - 1);
  return wrap(static_cast<int64_t>(static_cast<uint64_t>(static_cast<int64_t>(a))
                                   << std::min(-static_cast<int64_t>(b), int64_t{bits - 1})),
              bits);
}

// One lane of the ALU: a op b; `imm` is the instruction's immediate (SHR_CLIP's bounds).
inline int32_t alu_apply(AluOp op, int32_t a, int32_t b, int32_t imm, int bits) {
  switch (op) {
    case AluOp::kMin: return std::min(a, b);
    case AluOp::kMax: return std::max(a, b);
    case AluOp::kAdd: return wrap(int64_t{a} + b, bits);
    case AluOp::kShr:
      return shift_right(a, b, bits);
    case AluOp::kMul: return wrap(int64_t{a} * b, bits);
    case AluOp::kClip: return std::min(std::max(a, isa::clip_low(b)), isa::clip_high(b));
    case AluOp::kShrClip:
      return std::min(std::max(shift_right(a, b, bits), isa::clip_low(imm)), isa::clip_high(imm));
  }
  return a;
}

std::string describe(size_t index, const isa::Insn &insn) {
  return fmt::format("instruction {} ({})", index, isa::insn_label(insn));
}

}  // namespace

// The scratchpads and the execution of one instruction at a time.
class Fsim::Machine {
 public:
  Machine(const isa::HwConfig &c, const FsimOptions &options, FsimStats &stats)
      : c_(c),
        data_(options.data),
        stats_(stats),
        inp_(static_cast<size_t>(c.inp_depth()) * c.batch * c.block_in),
        wgt_(static_cast<size_t>(c.wgt_depth()) * c.block_out * c.block_in),
        acc_(static_cast<size_t>(c.acc_depth()) * c.batch * c.block_out),
        uop_(c.uop_depth()),
        acc_writer_(c.acc_depth()),
        gemm_kernel_(pick_gemm_kernel(c.block_in)) {}

  void reset() {
    std::fill(acc_writer_.begin(), acc_writer_.end(), 0);
    store_tokens_.clear();
    store_guard_[0] = store_guard_[1] = -1;
    std::fill(uop_.begin(), uop_.end(), isa::Uop{});
    if (!data_) return;  // the data scratchpads are never read
    std::fill(inp_.begin(), inp_.end(), 0);
    std::fill(wgt_.begin(), wgt_.end(), 0);
    std::fill(acc_.begin(), acc_.end(), 0);
  }

  // Rejects what no engine can execute, before anything runs.
  void check_legal(size_t index, const isa::Insn &insn) const {
    const isa::DepFlags &d = isa::deps_of(insn);
    const isa::Engine e = isa::engine_of(insn);
    if (e == isa::Engine::kLoad && (d.pop_prev || d.push_prev))
      fail("{}: runs on the load engine, which has no previous engine: clear pop_prev/push_prev",
           describe(index, insn));
    if (e == isa::Engine::kStore && (d.pop_next || d.push_next))
      fail("{}: runs on the store engine, which has no next engine: clear pop_next/push_next",
           describe(index, insn));
    if (const auto *m = std::get_if<MemInsn>(&insn)) {
      if (m->opcode == isa::Opcode::kLoad && m->mem == MemId::kOut)
        fail("{}: LOAD cannot target OUT (field 'mem')", describe(index, insn));
      // (decoding already refused STORE INP where extensions.store_inp is off)
      if (m->opcode == isa::Opcode::kStore && m->mem != MemId::kOut && m->mem != MemId::kInp)
        fail("{}: STORE only writes OUT{} (field 'mem')", describe(index, insn),
             c_.store_inp ? " and INP" : "");
      const bool padded = m->pad_top || m->pad_bottom || m->pad_left || m->pad_right;
      if (padded && (m->mem == MemId::kUop || m->mem == MemId::kOut))
        fail("{}: padding is only legal for inp, wgt and acc (fields 'pad_*')",
             describe(index, insn));
    }
  }

  void execute(size_t index, const isa::Insn &insn, std::vector<uint8_t> &dram) {
    if (const auto *m = std::get_if<MemInsn>(&insn)) {
      if (m->opcode == isa::Opcode::kLoad) load(index, *m, dram);
      else store(index, *m, dram);
    } else if (const auto *g = std::get_if<GemmInsn>(&insn)) {
      gemm(index, *g);
    } else if (const auto *a = std::get_if<AluInsn>(&insn)) {
      alu(index, *a);
    }
    if (isa::engine_of(insn) == isa::Engine::kCompute && isa::deps_of(insn).push_next)
      store_tokens_.push_back({index, banks_covered(insn)});
    stats_.insns[static_cast<int>(isa::engine_of(insn))]++;
  }

 private:
  // Checks a 2D DRAM access: the last element touched must lie inside the image.
  void check_dram(size_t index, const MemInsn &m, std::vector<uint8_t> &dram) const {
    if (m.y_size == 0 || m.x_size == 0) return;
    const uint64_t tile = c_.tile_bytes(m.mem);
    const uint64_t last = uint64_t{m.dram_base} + uint64_t{m.y_size - 1} * m.x_stride + m.x_size - 1;
    if ((last + 1) * tile > dram.size())
      fail("{}: field 'dram_base' = {} with y_size {}, x_size {}, x_stride {} reaches element {} "
           "(byte {}), beyond the {}-byte device memory",
           describe(index, isa::Insn{m}), m.dram_base, m.y_size, m.x_size, m.x_stride, last,
           (last + 1) * tile, dram.size());
  }

  void check_sram(size_t index, const isa::Insn &insn, const char *field, uint64_t end,
                  MemId mem) const {
    const uint64_t depth = c_.depth(mem);
    if (end > depth)
      fail("{}: field '{}' reaches {} index {}, beyond its depth {}", describe(index, insn), field,
           isa::mem_id_name(mem == MemId::kOut ? MemId::kAcc : mem), end - 1, depth);
  }

  void load(size_t index, const MemInsn &m, std::vector<uint8_t> &dram) {
    const uint64_t width = uint64_t{m.pad_left} + m.x_size + m.pad_right;
    const uint64_t height = uint64_t{m.pad_top} + m.y_size + m.pad_bottom;
    check_sram(index, m, "sram_base", m.sram_base + width * height, m.mem);
    check_dram(index, m, dram);
    const int tile = c_.tile_bytes(m.mem);
    for (uint64_t y = 0; y < height; ++y) {
      for (uint64_t x = 0; x < width; ++x) {
        const uint64_t dst = m.sram_base + y * width + x;
        const bool pad = y < m.pad_top || y >= m.pad_top + m.y_size || x < m.pad_left ||
                         x >= m.pad_left + m.x_size;
        const uint8_t *src =
            pad ? nullptr
                : dram.data() +
                      (m.dram_base + (y - m.pad_top) * m.x_stride + (x - m.pad_left)) * tile;
        if (data_ || m.mem == MemId::kUop) write_element(m.mem, dst, src);
        if (m.mem == MemId::kAcc) acc_writer_[dst] = static_cast<uint32_t>(index) + 1;
      }
    }
    stats_.load_bytes[static_cast<int>(m.mem)] += uint64_t{m.y_size} * m.x_size * tile;
  }

  // Writes one scratchpad element from DRAM bytes, or zero when src is null.
  void write_element(MemId mem, uint64_t index, const uint8_t *src) {
    switch (mem) {
      case MemId::kInp: {
        const size_t n = c_.batch * c_.block_in;
        if (src) std::memcpy(&inp_[index * n], src, n);
        else std::fill_n(&inp_[index * n], n, 0);
        break;
      }
      case MemId::kWgt: {
        const size_t n = c_.block_out * c_.block_in;
        if (src) std::memcpy(&wgt_[index * n], src, n);
        else std::fill_n(&wgt_[index * n], n, 0);
        break;
      }
      case MemId::kAcc: {
        const size_t n = c_.batch * c_.block_out;
        int32_t *dst = &acc_[index * n];
        for (size_t e = 0; e < n; ++e) {
          if (!src) dst[e] = 0;
          else if (c_.acc_bits == 32) std::memcpy(&dst[e], src + 4 * e, 4);
          else dst[e] = static_cast<int16_t>(src[2 * e] | (src[2 * e + 1] << 8));
        }
        break;
      }
      case MemId::kUop: {
        uint64_t bits = 0;
        if (src)
          for (int b = 0; b < c_.uop_bytes(); ++b) bits |= uint64_t{src[b]} << (8 * b);
        uop_[index] = isa::decode_uop(c_, bits);
        break;
      }
      case MemId::kOut: break;  // rejected by check_legal
    }
  }

  void store(size_t index, const MemInsn &m, std::vector<uint8_t> &dram) {
    check_sram(index, m, "sram_base", m.sram_base + uint64_t{m.y_size} * m.x_size, MemId::kAcc);
    const bool to_inp = m.mem == MemId::kInp;  // extensions.store_inp: dram_base is an INP index
    if (to_inp && m.y_size != 0 && m.x_size != 0)
      check_sram(index, m, "dram_base",
                 uint64_t{m.dram_base} + uint64_t{m.y_size - 1} * m.x_stride + m.x_size,
                 MemId::kInp);
    if (!to_inp) check_dram(index, m, dram);
    if (m.deps.pop_prev && !store_tokens_.empty()) {
      const StoreToken t = store_tokens_.front();
      store_tokens_.pop_front();
      for (int b = 0; b < 2; ++b)
        if (t.banks >> b & 1) store_guard_[b] = std::max<int64_t>(store_guard_[b], t.pusher);
    }
    for (uint64_t e = 0; e < uint64_t{m.y_size} * m.x_size; ++e) {
      const uint32_t tile = static_cast<uint32_t>(m.sram_base + e);
      const uint32_t writer = acc_writer_[tile];
      const int bank = c_.acc_bank(tile);
      if (writer != 0 && static_cast<int64_t>(writer - 1) > store_guard_[bank])
        fail("{}: reads ACC index {} (bank {}), last written by instruction {}, which no token "
             "this store waited for covers ({}); a token from a GEMM/ALU with the overlap flag "
             "covers only its own bank: push_next from an instruction that covers the write (or "
             "clear its overlap flag) and pop that token before this store",
             describe(index, isa::Insn{m}), tile, bank, writer - 1,
             store_guard_[bank] >= 0
                 ? fmt::format("bank {} is covered up to instruction {}", bank, store_guard_[bank])
                 : fmt::format("no token covers bank {} yet", bank));
    }
    // An OUT element in DRAM and an INP tile are both n int8 values (STORE INP needs
    // block_in == block_out, a config rule).
    const int n = c_.batch * c_.block_out;
    uint8_t *const to = to_inp ? reinterpret_cast<uint8_t *>(inp_.data()) : dram.data();
    for (uint64_t y = 0; data_ && y < m.y_size; ++y)
      for (uint64_t x = 0; x < m.x_size; ++x) {
        const int32_t *src = &acc_[(m.sram_base + y * m.x_size + x) * n];
        uint8_t *dst = to + (m.dram_base + y * m.x_stride + x) * n;
        for (int e = 0; e < n; ++e) dst[e] = static_cast<uint8_t>(src[e]);  // truncate to int8
      }
    stats_.store_bytes[static_cast<int>(m.mem)] += uint64_t{m.y_size} * m.x_size * n;
  }

  // Checks the micro-op range and that every index the loops produce stays in its scratchpad.
  template <typename Insn>
  void check_loops(size_t index, const Insn &insn, const char *dst_field, const char *src_field,
                   const isa::LoopFactors &dst_f, const isa::LoopFactors &src_f, MemId src_mem,
                   const isa::LoopFactors *wgt_f) const {
    if (insn.uop_begin > insn.uop_end)
      fail("{}: field 'uop_begin' = {} is after 'uop_end' = {}", describe(index, insn),
           insn.uop_begin, insn.uop_end);
    check_sram(index, insn, "uop_end", insn.uop_end, MemId::kUop);
    if (insn.loop_out == 0 || insn.loop_in == 0 || insn.uop_begin == insn.uop_end) return;
    uint32_t max_dst = 0, max_src = 0, max_wgt = 0;
    for (uint32_t u = insn.uop_begin; u < insn.uop_end; ++u) {
      max_dst = std::max(max_dst, uop_[u].dst);
      max_src = std::max(max_src, uop_[u].src);
      max_wgt = std::max(max_wgt, uop_[u].wgt);
    }
    auto reach = [&](uint32_t base, const isa::LoopFactors &f) {
      return uint64_t{base} + uint64_t{insn.loop_out - 1} * f.out +
             uint64_t{insn.loop_in - 1} * f.in + 1;
    };
    check_sram(index, insn, dst_field, reach(max_dst, dst_f), MemId::kAcc);
    check_sram(index, insn, src_field, reach(max_src, src_f), src_mem);
    if (wgt_f) check_sram(index, insn, "wgt_factor_*", reach(max_wgt, *wgt_f), MemId::kWgt);
  }

  void gemm(size_t index, const GemmInsn &g) {
    check_loops(index, g, "acc_factor_*", "inp_factor_*", g.acc, g.inp, MemId::kInp, &g.wgt);
    const int acc_n = c_.batch * c_.block_out;
    const int inp_n = c_.batch * c_.block_in;
    const int wgt_n = c_.block_out * c_.block_in;
    const uint64_t uops = uint64_t{g.loop_out} * g.loop_in * (g.uop_end - g.uop_begin);
    check_bank(index, g, overlap_bank(g.overlap, g.uop_begin, g.uop_end),
               {{&isa::Uop::dst, &g.acc, "acc index (micro-op dst + acc_factor_*)"}});
    // No micro-ops, no work, however many loop iterations (up to 2^28 of them: walked, they
    // cost seconds).
    if (g.uop_begin == g.uop_end) return;
    if (!data_) mark_acc_written(index, g, g.acc);
    for (uint32_t i = 0; data_ && i < g.loop_out; ++i)
      for (uint32_t j = 0; j < g.loop_in; ++j)
        for (uint32_t u = g.uop_begin; u < g.uop_end; ++u) {
          const isa::Uop &op = uop_[u];
          const uint32_t a = op.dst + i * g.acc.out + j * g.acc.in;
          acc_writer_[a] = static_cast<uint32_t>(index) + 1;
          int32_t *acc = &acc_[size_t{a} * acc_n];
          if (g.reset || g.assign) std::fill_n(acc, acc_n, 0);  // assign: the product alone
          if (g.reset) continue;
          const uint32_t x = op.src + i * g.inp.out + j * g.inp.in;
          const uint32_t k = op.wgt + i * g.wgt.out + j * g.wgt.in;
          const int8_t *inp = &inp_[size_t{x} * inp_n];
          const int8_t *wgt = &wgt_[size_t{k} * wgt_n];
          if (gemm_kernel_) gemm_kernel_(inp, wgt, acc, c_.batch, c_.block_out, c_.acc_bits);
          else gemm_tile_any(inp, wgt, acc, c_.batch, c_.block_in, c_.block_out, c_.acc_bits);
        }
    stats_.gemm_uops += uops;
    if (!g.reset) stats_.macs += uops * c_.peak_macs_per_cycle();
  }

  void alu(size_t index, const AluInsn &a) {
    check_loops(index, a, "dst_factor_*", "src_factor_*", a.dst, a.src, MemId::kAcc, nullptr);
    const int n = c_.batch * c_.block_out;
    const int bits = c_.acc_bits;
    const int32_t imm = a.imm;  // already sign-extended from 16 bits
    const BankOperand dst{&isa::Uop::dst, &a.dst, "dst index (micro-op dst + dst_factor_*)"};
    const BankOperand src{&isa::Uop::src, &a.src, "src index (micro-op src + src_factor_*)"};
    const int bank = overlap_bank(a.overlap, a.uop_begin, a.uop_end);
    if (a.use_imm) check_bank(index, a, bank, {dst});
    else check_bank(index, a, bank, {dst, src});
    if (a.uop_begin == a.uop_end) return;  // as for a GEMM
    if (!data_) mark_acc_written(index, a, a.dst);
    for (uint32_t i = 0; data_ && i < a.loop_out; ++i)
      for (uint32_t j = 0; j < a.loop_in; ++j)
        for (uint32_t u = a.uop_begin; u < a.uop_end; ++u) {
          const isa::Uop &op = uop_[u];
          const uint32_t d = op.dst + i * a.dst.out + j * a.dst.in;
          const uint32_t s = op.src + i * a.src.out + j * a.src.in;
          acc_writer_[d] = static_cast<uint32_t>(index) + 1;
          int32_t *dst = &acc_[size_t{d} * n];
          const int32_t *src = &acc_[size_t{s} * n];
          for (int e = 0; e < n; ++e)
            dst[e] = alu_apply(a.op, dst[e], a.use_imm ? imm : src[e], imm, bits);
        }
    stats_.alu_ops += uint64_t{a.loop_out} * a.loop_in * (a.uop_end - a.uop_begin) * n;
  }

  // Without data, only the store-ordering check needs to know which ACC entries an instruction
  // writes: each distinct micro-op dst once per loop iteration, not once per micro-op (the
  // micro-ops of a reduction share their dst), and a loop whose factor is 0 once.
  template <typename Insn>
  void mark_acc_written(size_t index, const Insn &insn, const isa::LoopFactors &f) {
    dsts_.clear();
    for (uint32_t u = insn.uop_begin; u < insn.uop_end; ++u) dsts_.push_back(uop_[u].dst);
    std::sort(dsts_.begin(), dsts_.end());
    dsts_.erase(std::unique(dsts_.begin(), dsts_.end()), dsts_.end());
    const uint32_t loop_out = f.out == 0 ? std::min<uint32_t>(insn.loop_out, 1) : insn.loop_out;
    const uint32_t loop_in = f.in == 0 ? std::min<uint32_t>(insn.loop_in, 1) : insn.loop_in;
    const uint32_t writer = static_cast<uint32_t>(index) + 1;
    for (uint32_t i = 0; i < loop_out; ++i)
      for (uint32_t j = 0; j < loop_in; ++j)
        for (const uint32_t d : dsts_) acc_writer_[d + i * f.out + j * f.in] = writer;
  }

  // An instruction with the overlap flag touches only the ACC bank (half) of its first
  // micro-op's dst (isa/README.md, "Overlap"); `bank` is that bank, or -1 without the flag.
  int overlap_bank(bool overlap, uint32_t uop_begin, uint32_t uop_end) const {
    if (!overlap || uop_begin >= uop_end) return -1;
    return c_.acc_bank(uop_[uop_begin].dst);
  }
  // The ACC banks a compute instruction's push_next vouches for: a GEMM/ALU with the overlap
  // flag only for its own bank (the hardware pushes once that bank's work is done).
  uint8_t banks_covered(const isa::Insn &insn) const {
    int bank = -1;
    if (const auto *g = std::get_if<GemmInsn>(&insn))
      bank = overlap_bank(g->overlap, g->uop_begin, g->uop_end);
    if (const auto *a = std::get_if<AluInsn>(&insn))
      bank = overlap_bank(a->overlap, a->uop_begin, a->uop_end);
    return bank < 0 ? 3 : static_cast<uint8_t>(1 << bank);
  }

  // An ACC operand of a GEMM/ALU: its micro-op field, loop factors and name for diagnostics.
  struct BankOperand {
    uint32_t isa::Uop::*field;
    const isa::LoopFactors *factors;
    const char *name;
  };
  // Checks, once per instruction, that a flagged one stays in `bank`. Indices grow with the
  // loop counters and the banks are contiguous halves, so each micro-op's first and last
  // index decide.
  template <typename Insn>
  void check_bank(size_t index, const Insn &insn, int bank,
                  std::initializer_list<BankOperand> operands) const {
    if (bank < 0 || insn.loop_out == 0 || insn.loop_in == 0) return;
    for (uint32_t u = insn.uop_begin; u < insn.uop_end; ++u)
      for (const BankOperand &o : operands) {
        const uint64_t first = uop_[u].*o.field;
        const uint64_t last = first + uint64_t{insn.loop_out - 1} * o.factors->out +
                              uint64_t{insn.loop_in - 1} * o.factors->in;
        for (uint64_t acc_index : {first, last}) {
          if (c_.acc_bank(acc_index) == bank) continue;
          const int half = c_.acc_bank_depth();
          fail("{}: has the overlap flag, so it may touch only ACC bank {} (indices {}..{}, the "
               "bank of its first micro-op's dst), but its {} reaches ACC index {}; clear the "
               "flag or keep the instruction inside one half of ACC (isa/README.md, "
               "\"Overlap\")",
               describe(index, insn), bank, bank * half, bank * half + half - 1, o.name,
               acc_index);
        }
      }
  }

  const isa::HwConfig &c_;
  const bool data_;  // FsimOptions::data
  FsimStats &stats_;
  std::vector<int8_t> inp_;
  std::vector<int8_t> wgt_;
  std::vector<int32_t> acc_;
  std::vector<isa::Uop> uop_;
  // Store ordering check: the last instruction (index + 1, 0 = none) that wrote each ACC
  // entry, the banks each compute->store token in flight vouches for, and per bank the
  // latest compute instruction the store engine's popped tokens cover.
  std::vector<uint32_t> acc_writer_;
  std::vector<uint32_t> dsts_;  // mark_acc_written's scratch
  struct StoreToken {
    size_t pusher;
    uint8_t banks;
  };
  std::deque<StoreToken> store_tokens_;
  int64_t store_guard_[2] = {-1, -1};
  GemmKernel gemm_kernel_;
};

uint64_t insn_operations(const isa::Insn &insn) {
  uint64_t work = 0;
  if (const auto *m = std::get_if<MemInsn>(&insn)) {
    work = (uint64_t{m->pad_top} + m->y_size + m->pad_bottom) *
           (uint64_t{m->pad_left} + m->x_size + m->pad_right);
  } else if (const auto *g = std::get_if<GemmInsn>(&insn)) {
    if (g->uop_end > g->uop_begin)
      work = uint64_t{g->loop_out} * g->loop_in * (g->uop_end - g->uop_begin);
  } else if (const auto *a = std::get_if<AluInsn>(&insn)) {
    if (a->uop_end > a->uop_begin)
      work = uint64_t{a->loop_out} * a->loop_in * (a->uop_end - a->uop_begin);
  }
  return 1 + work;
}

Fsim::Fsim(const isa::HwConfig &config, FsimOptions options)
    : config_(config),
      options_(options),
      machine_(std::make_unique<Machine>(config_, options_, stats_)) {}

Fsim::~Fsim() = default;

void Fsim::run(std::vector<uint8_t> &dram, uint64_t insn_offset, uint32_t insn_count) {
  stats_ = FsimStats{};
  machine_->reset();
  if (insn_offset % isa::kInsnBytes != 0)
    fail("instruction offset {} is not a multiple of {} bytes", insn_offset, isa::kInsnBytes);
  if (insn_offset + uint64_t{insn_count} * isa::kInsnBytes > dram.size())
    fail("the instruction stream ({} instructions at byte {}) lies outside the {}-byte device "
         "memory",
         insn_count, insn_offset, dram.size());
  std::vector<isa::Insn> insns;
  insns.reserve(insn_count);
  bool has_finish = false;
  for (uint32_t i = 0; i < insn_count; ++i) {
    try {
      insns.push_back(
          isa::decode(config_, isa::load_word(dram.data() + insn_offset + size_t{i} * 16)));
    } catch (const Error &e) {
      fail("instruction {}: illegal instruction: {}", i, e.what());
    }
    machine_->check_legal(i, insns.back());
    has_finish |= isa::opcode_of(insns.back()) == isa::Opcode::kFinish;
  }
  if (!has_finish)
    fail("the program has no FINISH instruction: the accelerator would never signal done");
  uint64_t operations = 0;
  const uint64_t limit = options_.op_limit;
  schedule_program(
      config_, insns,
      [&](size_t i) {
        operations += insn_operations(insns[i]);
        if (limit != 0 && operations > limit)
          fail(
              "{}: the run reaches {} operations, over its limit of {} (instructions, micro-ops "
              "and "
              "tiles moved); a program this long is likely wrong: raise the limit (--cycle-limit) "
              "if it is not",
              describe(i, insns[i]), operations, limit);
        machine_->execute(i, insns[i], dram);
      },
      options_.latest_first);
}

}  // namespace vacc::sim
