#include "vacc/isa/encoding.h"

#include <algorithm>

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
  return std::max({c.uop_index_bits(), c.inp_index_bits(), c.wgt_index_bits(),
                   c.acc_index_bits()});
}

// Bit-level access to a 128-bit word.
void put_bits(InsnWord &w, int offset, int width, uint64_t value) {
  for (int i = 0; i < width; ++i) {
    int bit = offset + i;
    uint64_t b = (value >> i) & 1;
    uint64_t &half = bit < 64 ? w.lo : w.hi;
    half |= b << (bit % 64);
  }
}

uint64_t get_bits(const InsnWord &w, int offset, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) {
    int bit = offset + i;
    uint64_t half = bit < 64 ? w.lo : w.hi;
    v |= ((half >> (bit % 64)) & 1) << i;
  }
  return v;
}

// Packs values by field name, checking that each fits.
class Packer {
 public:
  Packer(const std::vector<Field> &fields, Opcode op) : fields_(fields), op_(op) {}

  Packer &set(const std::string &name, int64_t value) {
    const Field &f = find(name);
    if (f.is_signed) {
      int64_t lo = -(int64_t{1} << (f.width - 1)), hi = (int64_t{1} << (f.width - 1)) - 1;
      if (value < lo || value > hi)
        fail("{} field '{}' = {} does not fit its {} signed bits (range {}..{})",
             opcode_name(op_), name, value, f.width, lo, hi);
      put_bits(word_, f.offset, f.width, static_cast<uint64_t>(value) & mask(f.width));
    } else {
      uint64_t max = mask(f.width);
      if (value < 0 || static_cast<uint64_t>(value) > max)
        fail("{} field '{}' = {} does not fit its {} bits (max {})", opcode_name(op_), name,
             value, f.width, max);
      put_bits(word_, f.offset, f.width, static_cast<uint64_t>(value));
    }
    return *this;
  }
  InsnWord word() const { return word_; }

  static uint64_t mask(int width) { return width >= 64 ? ~0ull : (1ull << width) - 1; }

 private:
  const Field &find(const std::string &name) const {
    for (const auto &f : fields_)
      if (f.name == name) return f;
    VACC_CHECK(false) << "no field " << name;
    return fields_.front();
  }
  const std::vector<Field> &fields_;
  Opcode op_;
  InsnWord word_;
};

class Unpacker {
 public:
  Unpacker(const std::vector<Field> &fields, const InsnWord &w) : fields_(fields), w_(w) {}
  int64_t get(const std::string &name) const {
    for (const auto &f : fields_) {
      if (f.name != name) continue;
      uint64_t raw = get_bits(w_, f.offset, f.width);
      if (f.is_signed && (raw >> (f.width - 1)) & 1)
        return static_cast<int64_t>(raw | ~Packer::mask(f.width));
      return static_cast<int64_t>(raw);
    }
    VACC_CHECK(false) << "no field " << name;
    return 0;
  }

 private:
  const std::vector<Field> &fields_;
  const InsnWord &w_;
};

void set_deps(Packer &p, Opcode op, const DepFlags &d) {
  p.set("opcode", static_cast<int>(op))
      .set("pop_prev", d.pop_prev)
      .set("pop_next", d.pop_next)
      .set("push_prev", d.push_prev)
      .set("push_next", d.push_next);
}

DepFlags get_deps(const Unpacker &u) {
  return DepFlags{u.get("pop_prev") != 0, u.get("pop_next") != 0, u.get("push_prev") != 0,
                  u.get("push_next") != 0};
}

}  // namespace

std::vector<Field> insn_fields(const HwConfig &c, Opcode op) {
  FieldList f;
  f.add("opcode", kOpcodeBits).add("pop_prev", 1).add("pop_next", 1).add("push_prev", 1).add(
      "push_next", 1);
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
  const auto fields = insn_fields(config, op);
  Packer p(fields, op);
  set_deps(p, op, deps_of(insn));
  if (const auto *m = std::get_if<MemInsn>(&insn)) {
    p.set("mem", static_cast<int>(m->mem))
        .set("sram_base", m->sram_base)
        .set("dram_base", m->dram_base)
        .set("y_size", m->y_size)
        .set("x_size", m->x_size)
        .set("x_stride", m->x_stride)
        .set("pad_top", m->pad_top)
        .set("pad_bottom", m->pad_bottom)
        .set("pad_left", m->pad_left)
        .set("pad_right", m->pad_right);
  } else if (const auto *g = std::get_if<GemmInsn>(&insn)) {
    p.set("reset", g->reset)
        .set("uop_begin", g->uop_begin)
        .set("uop_end", g->uop_end)
        .set("loop_out", g->loop_out)
        .set("loop_in", g->loop_in)
        .set("acc_factor_out", g->acc.out)
        .set("acc_factor_in", g->acc.in)
        .set("inp_factor_out", g->inp.out)
        .set("inp_factor_in", g->inp.in)
        .set("wgt_factor_out", g->wgt.out)
        .set("wgt_factor_in", g->wgt.in)
        .set("overlap", g->overlap);
  } else if (const auto *a = std::get_if<AluInsn>(&insn)) {
    p.set("alu_op", static_cast<int>(a->op))
        .set("uop_begin", a->uop_begin)
        .set("uop_end", a->uop_end)
        .set("loop_out", a->loop_out)
        .set("loop_in", a->loop_in)
        .set("dst_factor_out", a->dst.out)
        .set("dst_factor_in", a->dst.in)
        .set("src_factor_out", a->src.out)
        .set("src_factor_in", a->src.in)
        .set("use_imm", a->use_imm)
        .set("imm", a->imm)
        .set("overlap", a->overlap);
  }
  return p.word();
}

Insn decode(const HwConfig &config, const InsnWord &word) {
  const uint64_t raw_op = get_bits(word, 0, kOpcodeBits);
  if (raw_op > static_cast<uint64_t>(Opcode::kAlu))
    fail("unknown opcode {} (valid: 0 LOAD, 1 STORE, 2 GEMM, 3 FINISH, 4 ALU)", raw_op);
  const Opcode op = static_cast<Opcode>(raw_op);
  const auto fields = insn_fields(config, op);
  Unpacker u(fields, word);
  const DepFlags deps = get_deps(u);
  auto u32 = [&](const char *name) { return static_cast<uint32_t>(u.get(name)); };
  switch (op) {
    case Opcode::kLoad:
    case Opcode::kStore: {
      MemInsn m;
      m.opcode = op;
      m.deps = deps;
      int64_t mem = u.get("mem");
      if (mem >= kNumMemIds) fail("{} has unknown memory id {}", opcode_name(op), mem);
      m.mem = static_cast<MemId>(mem);
      m.sram_base = u32("sram_base");
      m.dram_base = u32("dram_base");
      m.y_size = u32("y_size");
      m.x_size = u32("x_size");
      m.x_stride = u32("x_stride");
      m.pad_top = u32("pad_top");
      m.pad_bottom = u32("pad_bottom");
      m.pad_left = u32("pad_left");
      m.pad_right = u32("pad_right");
      return m;
    }
    case Opcode::kGemm: {
      GemmInsn g;
      g.deps = deps;
      g.reset = u.get("reset") != 0;
      g.uop_begin = u32("uop_begin");
      g.uop_end = u32("uop_end");
      g.loop_out = u32("loop_out");
      g.loop_in = u32("loop_in");
      g.acc = {u32("acc_factor_out"), u32("acc_factor_in")};
      g.inp = {u32("inp_factor_out"), u32("inp_factor_in")};
      g.wgt = {u32("wgt_factor_out"), u32("wgt_factor_in")};
      g.overlap = u.get("overlap") != 0;
      return g;
    }
    case Opcode::kAlu: {
      AluInsn a;
      a.deps = deps;
      int64_t alu_op = u.get("alu_op");
      if (alu_op >= kNumAluOps)
        fail("ALU has unknown operation {} (valid: 0 min, 1 max, 2 add, 3 shr, 4 mul)", alu_op);
      a.op = static_cast<AluOp>(alu_op);
      a.uop_begin = u32("uop_begin");
      a.uop_end = u32("uop_end");
      a.loop_out = u32("loop_out");
      a.loop_in = u32("loop_in");
      a.dst = {u32("dst_factor_out"), u32("dst_factor_in")};
      a.src = {u32("src_factor_out"), u32("src_factor_in")};
      a.use_imm = u.get("use_imm") != 0;
      a.imm = static_cast<int32_t>(u.get("imm"));
      a.overlap = u.get("overlap") != 0;
      return a;
    }
    case Opcode::kFinish:
      return FinishInsn{deps};
  }
  VACC_CHECK(false) << "unreachable";
  return FinishInsn{};
}

uint64_t encode_uop(const HwConfig &config, const Uop &uop) {
  const auto fields = uop_fields(config);
  uint64_t bits = 0;
  const uint32_t values[3] = {uop.dst, uop.src, uop.wgt};
  for (int i = 0; i < 3; ++i) {
    if (values[i] > Packer::mask(fields[i].width))
      fail("micro-op field '{}' = {} does not fit its {} bits (max {})", fields[i].name,
           values[i], fields[i].width, Packer::mask(fields[i].width));
    bits |= uint64_t{values[i]} << fields[i].offset;
  }
  return bits;
}

Uop decode_uop(const HwConfig &config, uint64_t bits) {
  const auto fields = uop_fields(config);
  auto get = [&](int i) {
    return static_cast<uint32_t>((bits >> fields[i].offset) & Packer::mask(fields[i].width));
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
