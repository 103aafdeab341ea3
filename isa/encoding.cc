#include "vacc/isa/encoding.h"

#include <algorithm>
#include <array>
#include <memory>

#include "vacc/support/error.h"

namespace vacc::isa {

namespace {

// Appends fields in order, assigning offsets.
class FieldList {
 public:
  FieldList &add(const std::string &name, int width, bool is_signed = false) {
    fields_.push_back(Field{name, next_, width, is_signed});
    next_ += width;
    return *this;
  }
  std::vector<Field> take() { return std::move(fields_); }

 private:
  std::vector<Field> fields_;
  int next_ = 0;
};

int sram_base_bits(const HwConfig &c) {
  return std::max({c.uop_index_bits(), c.inp_index_bits(), c.wgt_index_bits(), c.acc_index_bits()});
}

uint64_t mask(int width) {
  return width >= 64 ? ~0ull : (1ull << width) - 1;
}

// A field of `width` <= 64 bits at bit `offset` of a 128-bit word (it may straddle the halves).
void put_bits(InsnWord &w, int offset, int width, uint64_t value) {
  value &= mask(width);
  if (offset < 64) {
    w.lo |= value << offset;
    if (offset + width > 64) w.hi |= value >> (64 - offset);
  } else {
    w.hi |= value << (offset - 64);
  }
}

uint64_t get_bits(const InsnWord &w, int offset, int width) {
  uint64_t v;
  if (offset < 64) {
    v = w.lo >> offset;
    if (offset + width > 64) v |= w.hi << (64 - offset);
  } else {
    v = w.hi >> (offset - 64);
  }
  return v & mask(width);
}

// The field tables of one config, built once per distinct key (the fields' widths follow from
// the GEMM shape, data widths and buffer sizes) and kept for the thread's lifetime: encode and
// decode run for every instruction a runtime streams, and rebuilding the named tables each time
// dominated them.
struct Layout {
  std::vector<Field> insn[5];  // by opcode
  std::vector<Field> uop;
};

const Layout &layout(const HwConfig &c) {
  struct Entry {
    std::array<int, 10> key;
    std::unique_ptr<Layout> layout;
  };
  thread_local std::vector<Entry> cache;
  const std::array<int, 10> key = {c.batch,    c.block_in, c.block_out, c.inp_bits, c.wgt_bits,
                                   c.acc_bits, c.uop_kib,  c.inp_kib,   c.wgt_kib,  c.acc_kib};
  for (const Entry &e : cache)
    if (e.key == key) return *e.layout;
  auto l = std::make_unique<Layout>();
  for (int op = 0; op < 5; ++op) l->insn[op] = insn_fields(c, static_cast<Opcode>(op));
  l->uop = uop_fields(c);
  cache.push_back({key, std::move(l)});
  return *cache.back().layout;
}

// Packs values in the order of the opcode's field table (encode() sets them in that order;
// the names serve the messages), checking that each fits.
class Packer {
 public:
  Packer(const std::vector<Field> &fields, Opcode op) : fields_(fields), op_(op) {}

  Packer &set(int64_t value) {
    VACC_CHECK(next_ < fields_.size()) << "more values than fields";
    const Field &f = fields_[next_++];
    if (f.is_signed) {
      int64_t lo = -(int64_t{1} << (f.width - 1)), hi = (int64_t{1} << (f.width - 1)) - 1;
      if (value < lo || value > hi)
        fail("{} field '{}' = {} does not fit its {} signed bits (range {}..{})", opcode_name(op_),
             f.name, value, f.width, lo, hi);
    } else if (value < 0 || static_cast<uint64_t>(value) > mask(f.width)) {
      fail("{} field '{}' = {} does not fit its {} bits (max {})", opcode_name(op_), f.name, value,
           f.width, mask(f.width));
    }
    put_bits(word_, f.offset, f.width, static_cast<uint64_t>(value));
    return *this;
  }
  InsnWord word() const {
    VACC_CHECK(next_ == fields_.size()) << "encode set " << next_ << " of " << fields_.size();
    return word_;
  }

 private:
  const std::vector<Field> &fields_;
  Opcode op_;
  size_t next_ = 0;
  InsnWord word_;
};

// Reads fields in the order of the opcode's field table.
class Unpacker {
 public:
  Unpacker(const std::vector<Field> &fields, const InsnWord &w) : fields_(fields), w_(w) {}
  int64_t next() {
    VACC_CHECK(next_ < fields_.size()) << "more reads than fields";
    const Field &f = fields_[next_++];
    const uint64_t raw = get_bits(w_, f.offset, f.width);
    if (f.is_signed && (raw >> (f.width - 1)) & 1)
      return static_cast<int64_t>(raw | ~mask(f.width));
    return static_cast<int64_t>(raw);
  }
  uint32_t next_u32() { return static_cast<uint32_t>(next()); }

 private:
  const std::vector<Field> &fields_;
  const InsnWord &w_;
  size_t next_ = 0;
};

void set_deps(Packer &p, uint64_t opcode, const DepFlags &d) {
  p.set(static_cast<int64_t>(opcode))
      .set(d.pop_prev)
      .set(d.pop_next)
      .set(d.push_prev)
      .set(d.push_next);
}

DepFlags get_deps(Unpacker &u) {
  u.next();  // opcode
  DepFlags d;
  d.pop_prev = u.next() != 0;
  d.pop_next = u.next() != 0;
  d.push_prev = u.next() != 0;
  d.push_next = u.next() != 0;
  return d;
}

}  // namespace

std::vector<Field> insn_fields(const HwConfig &c, Opcode op) {
  FieldList f;
  f.add("opcode", kOpcodeBits)
      .add("pop_prev", 1)
      .add("pop_next", 1)
      .add("push_prev", 1)
      .add("push_next", 1);
  const int uop = c.uop_index_bits();
  switch (op) {
    case Opcode::kLoad:
    case Opcode::kStore:
      f.add("mem", kMemIdBits)
          .add("sram_base", sram_base_bits(c))
          .add("dram_base", kDramBaseBits)
          .add("y_size", kDmaSizeBits)
          .add("x_size", kDmaSizeBits)
          .add("x_stride", kDmaSizeBits)
          .add("pad_top", kPadBits)
          .add("pad_bottom", kPadBits)
          .add("pad_left", kPadBits)
          .add("pad_right", kPadBits);
      break;
    case Opcode::kGemm:
      f.add("reset", 1)
          .add("uop_begin", uop)
          .add("uop_end", uop + 1)
          .add("loop_out", kLoopBits)
          .add("loop_in", kLoopBits)
          .add("acc_factor_out", c.acc_index_bits())
          .add("acc_factor_in", c.acc_index_bits())
          .add("inp_factor_out", c.inp_index_bits())
          .add("inp_factor_in", c.inp_index_bits())
          .add("wgt_factor_out", c.wgt_index_bits())
          .add("wgt_factor_in", c.wgt_index_bits())
          .add("overlap", 1);
      break;
    case Opcode::kAlu:
      f.add("alu_op", kAluOpBits)
          .add("uop_begin", uop)
          .add("uop_end", uop + 1)
          .add("loop_out", kLoopBits)
          .add("loop_in", kLoopBits)
          .add("dst_factor_out", c.acc_index_bits())
          .add("dst_factor_in", c.acc_index_bits())
          .add("src_factor_out", c.acc_index_bits())
          .add("src_factor_in", c.acc_index_bits())
          .add("use_imm", 1)
          .add("imm", kImmBits, /*is_signed=*/true)
          .add("overlap", 1);
      break;
    case Opcode::kFinish:
      break;
  }
  return f.take();
}

int insn_bits(const HwConfig &config, Opcode op) {
  auto fields = insn_fields(config, op);
  return fields.back().offset + fields.back().width;
}

std::vector<Field> uop_fields(const HwConfig &c) {
  return FieldList()
      .add("dst", c.uop_dst_bits())
      .add("src", c.uop_src_bits())
      .add("wgt", c.uop_wgt_bits())
      .take();
}

InsnWord encode(const HwConfig &config, const Insn &insn) {
  const Opcode op = opcode_of(insn);
  Packer p(layout(config).insn[static_cast<int>(op)], op);
  // A GEMM with assign is GEMM's fields under its own opcode (extensions.gemm_assign).
  const auto *gemm = std::get_if<GemmInsn>(&insn);
  if (gemm && gemm->assign && !config.gemm_assign) fail("{}", gemm_assign_unavailable(config));
  set_deps(p, gemm && gemm->assign ? kGemmAssignOpcode : static_cast<uint64_t>(op), deps_of(insn));
  if (const auto *m = std::get_if<MemInsn>(&insn)) {
    if (m->opcode == Opcode::kStore && m->mem == MemId::kInp && !config.store_inp)
      fail("{}", store_inp_unavailable(config));
    p.set(static_cast<int>(m->mem))
        .set(m->sram_base)
        .set(m->dram_base)
        .set(m->y_size)
        .set(m->x_size)
        .set(m->x_stride)
        .set(m->pad_top)
        .set(m->pad_bottom)
        .set(m->pad_left)
        .set(m->pad_right);
  } else if (const auto *g = std::get_if<GemmInsn>(&insn)) {
    p.set(g->reset)
        .set(g->uop_begin)
        .set(g->uop_end)
        .set(g->loop_out)
        .set(g->loop_in)
        .set(g->acc.out)
        .set(g->acc.in)
        .set(g->inp.out)
        .set(g->inp.in)
        .set(g->wgt.out)
        .set(g->wgt.in)
        .set(g->overlap);
  } else if (const auto *a = std::get_if<AluInsn>(&insn)) {
    if (std::string why = alu_op_unavailable(config, a->op); !why.empty()) fail("{}", why);
    p.set(static_cast<int>(a->op))
        .set(a->uop_begin)
        .set(a->uop_end)
        .set(a->loop_out)
        .set(a->loop_in)
        .set(a->dst.out)
        .set(a->dst.in)
        .set(a->src.out)
        .set(a->src.in)
        .set(a->use_imm)
        .set(a->imm)
        .set(a->overlap);
  }
  return p.word();
}

Insn decode(const HwConfig &config, const InsnWord &word) {
  const uint64_t raw_op = get_bits(word, 0, kOpcodeBits);
  if (raw_op > kGemmAssignOpcode)
    fail("unknown opcode {} (valid: 0 LOAD, 1 STORE, 2 GEMM, 3 FINISH, 4 ALU, 5 GEMM with assign)",
         raw_op);
  if (raw_op == kGemmAssignOpcode && !config.gemm_assign)
    fail("{}", gemm_assign_unavailable(config));
  const Opcode op = raw_op == kGemmAssignOpcode ? Opcode::kGemm : static_cast<Opcode>(raw_op);
  Unpacker u(layout(config).insn[static_cast<int>(op)], word);
  const DepFlags deps = get_deps(u);
  switch (op) {
    case Opcode::kLoad:
    case Opcode::kStore: {
      MemInsn m;
      m.opcode = op;
      m.deps = deps;
      const int64_t mem = u.next();
      if (mem >= kNumMemIds) fail("{} has unknown memory id {}", opcode_name(op), mem);
      m.mem = static_cast<MemId>(mem);
      if (op == Opcode::kStore && m.mem == MemId::kInp && !config.store_inp)
        fail("{}", store_inp_unavailable(config));
      m.sram_base = u.next_u32();
      m.dram_base = u.next_u32();
      m.y_size = u.next_u32();
      m.x_size = u.next_u32();
      m.x_stride = u.next_u32();
      m.pad_top = u.next_u32();
      m.pad_bottom = u.next_u32();
      m.pad_left = u.next_u32();
      m.pad_right = u.next_u32();
      return m;
    }
    case Opcode::kGemm: {
      GemmInsn g;
      g.deps = deps;
      g.reset = u.next() != 0;
      g.uop_begin = u.next_u32();
      g.uop_end = u.next_u32();
      g.loop_out = u.next_u32();
      g.loop_in = u.next_u32();
      g.acc.out = u.next_u32();
      g.acc.in = u.next_u32();
      g.inp.out = u.next_u32();
      g.inp.in = u.next_u32();
      g.wgt.out = u.next_u32();
      g.wgt.in = u.next_u32();
      g.overlap = u.next() != 0;
      g.assign = raw_op == kGemmAssignOpcode;
      return g;
    }
    case Opcode::kAlu: {
      AluInsn a;
      a.deps = deps;
      const int64_t alu_op = u.next();
      if (alu_op >= kNumAluOps)
        fail(
            "ALU has unknown operation {} (valid: 0 min, 1 max, 2 add, 3 shr, 4 mul, 5 clip, 6 "
            "shr_clip)",
            alu_op);
      a.op = static_cast<AluOp>(alu_op);
      if (std::string why = alu_op_unavailable(config, a.op); !why.empty()) fail("{}", why);
      a.uop_begin = u.next_u32();
      a.uop_end = u.next_u32();
      a.loop_out = u.next_u32();
      a.loop_in = u.next_u32();
      a.dst.out = u.next_u32();
      a.dst.in = u.next_u32();
      a.src.out = u.next_u32();
      a.src.in = u.next_u32();
      a.use_imm = u.next() != 0;
      a.imm = static_cast<int32_t>(u.next());
      a.overlap = u.next() != 0;
      return a;
    }
    case Opcode::kFinish:
      return FinishInsn{deps};
  }
  VACC_CHECK(false) << "unreachable";
  return FinishInsn{};
}

uint64_t encode_uop(const HwConfig &config, const Uop &uop) {
  const std::vector<Field> &fields = layout(config).uop;
  uint64_t bits = 0;
  const uint32_t values[3] = {uop.dst, uop.src, uop.wgt};
  for (int i = 0; i < 3; ++i) {
    if (values[i] > mask(fields[i].width))
      fail("micro-op field '{}' = {} does not fit its {} bits (max {})", fields[i].name, values[i],
           fields[i].width, mask(fields[i].width));
    bits |= uint64_t{values[i]} << fields[i].offset;
  }
  return bits;
}

Uop decode_uop(const HwConfig &config, uint64_t bits) {
  const std::vector<Field> &fields = layout(config).uop;
  auto get = [&](int i) {
    return static_cast<uint32_t>((bits >> fields[i].offset) & mask(fields[i].width));
  };
  return Uop{get(0), get(1), get(2)};
}

void store_word(const InsnWord &word, uint8_t *bytes) {
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<uint8_t>(word.lo >> (8 * i));
    bytes[8 + i] = static_cast<uint8_t>(word.hi >> (8 * i));
  }
}

InsnWord load_word(const uint8_t *bytes) {
  InsnWord w;
  for (int i = 0; i < 8; ++i) {
    w.lo |= uint64_t{bytes[i]} << (8 * i);
    w.hi |= uint64_t{bytes[8 + i]} << (8 * i);
  }
  return w;
}

}  // namespace vacc::isa
