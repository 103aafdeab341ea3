// Encode/decode round trips of random instructions, and field overflow errors, per config.
#include "vacc/isa/encoding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "../expect_error.h"
#include "vacc/isa/assembly.h"
#include "vacc/isa/config_yaml.h"
#include "vacc/support/error.h"

namespace vacc::isa {
namespace {

HwConfig config_named(const std::string &name) {
  return load_config(std::string(VACC_TEST_CONFIG_DIR) + "/" + name + ".yaml");
}

class Encoding : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // "NAME+alu_clip", "NAME+gemm_assign", "NAME+store_inp": the bundled config with that
    // extension on.
    const std::string name = GetParam();
    const size_t plus = name.find('+');
    config = config_named(name.substr(0, plus));
    config.alu_clip = name.find("+alu_clip") != std::string::npos;
    config.gemm_assign = name.find("+gemm_assign") != std::string::npos;
    config.store_inp = name.find("+store_inp") != std::string::npos;
  }
  uint32_t random_field(const std::string &name, Opcode op) {
    for (const auto &f : insn_fields(config, op))
      if (f.name == name) return static_cast<uint32_t>(rng() & ((1ull << f.width) - 1));
    ADD_FAILURE() << "no field " << name;
    return 0;
  }
  DepFlags random_deps() { return {bool(rng() & 1), bool(rng() & 1), bool(rng() & 1), bool(rng() & 1)}; }
  Insn random_insn() {
    switch (rng() % 4) {
      case 0: {
        MemInsn m;
        m.opcode = rng() & 1 ? Opcode::kLoad : Opcode::kStore;
        m.deps = random_deps();
        m.mem = static_cast<MemId>(rng() % kNumMemIds);
        // STORE INP only where extensions.store_inp is on.
        if (m.opcode == Opcode::kStore && m.mem == MemId::kInp && !config.store_inp)
          m.mem = MemId::kOut;
        for (auto [field, name] : {std::pair{&m.sram_base, "sram_base"}, {&m.dram_base, "dram_base"},
                                   {&m.y_size, "y_size"}, {&m.x_size, "x_size"},
                                   {&m.x_stride, "x_stride"}, {&m.pad_top, "pad_top"},
                                   {&m.pad_bottom, "pad_bottom"}, {&m.pad_left, "pad_left"},
                                   {&m.pad_right, "pad_right"}})
          *field = random_field(name, m.opcode);
        return m;
      }
      case 1: {
        GemmInsn g;
        g.deps = random_deps();
        g.reset = rng() & 1;
        const Opcode op = Opcode::kGemm;
        g.uop_begin = random_field("uop_begin", op);
        g.uop_end = random_field("uop_end", op);
        g.loop_out = random_field("loop_out", op);
        g.loop_in = random_field("loop_in", op);
        g.acc = {random_field("acc_factor_out", op), random_field("acc_factor_in", op)};
        g.inp = {random_field("inp_factor_out", op), random_field("inp_factor_in", op)};
        g.wgt = {random_field("wgt_factor_out", op), random_field("wgt_factor_in", op)};
        g.overlap = rng() & 1;
        if (config.gemm_assign) g.assign = rng() & 1;  // opcode 5 (drawn only then)
        return g;
      }
      case 2: {
        AluInsn a;
        const Opcode op = Opcode::kAlu;
        a.deps = random_deps();
        do {
          a.op = static_cast<AluOp>(rng() % kNumAluOps);
        } while (!alu_op_unavailable(config, a.op).empty());
        a.uop_begin = random_field("uop_begin", op);
        a.uop_end = random_field("uop_end", op);
        a.loop_out = random_field("loop_out", op);
        a.loop_in = random_field("loop_in", op);
        a.dst = {random_field("dst_factor_out", op), random_field("dst_factor_in", op)};
        a.src = {random_field("src_factor_out", op), random_field("src_factor_in", op)};
        a.use_imm = rng() & 1;
        a.imm = static_cast<int16_t>(rng());
        a.overlap = rng() & 1;
        return a;
      }
      default:
        return FinishInsn{random_deps()};
    }
  }
  HwConfig config;
  std::mt19937_64 rng{42};
};

TEST_P(Encoding, RandomInstructionsRoundTrip) {
  for (int i = 0; i < 20000; ++i) {
    const Insn insn = random_insn();
    const InsnWord word = encode(config, insn);
    uint8_t bytes[kInsnBytes];
    store_word(word, bytes);
    EXPECT_EQ(load_word(bytes), word);
    ASSERT_EQ(decode(config, word), insn) << "instruction " << i;
  }
}

TEST_P(Encoding, FieldsAreDisjointAndFit128Bits) {
  for (Opcode op : {Opcode::kLoad, Opcode::kStore, Opcode::kGemm, Opcode::kAlu, Opcode::kFinish}) {
    int next = 0;
    for (const auto &f : insn_fields(config, op)) {
      EXPECT_EQ(f.offset, next) << f.name;
      EXPECT_GT(f.width, 0) << f.name;
      next += f.width;
    }
    EXPECT_LE(next, 128) << opcode_name(op);
  }
}

TEST_P(Encoding, UopRoundTrip) {
  const auto fields = uop_fields(config);
  for (int i = 0; i < 1000; ++i) {
    Uop u{static_cast<uint32_t>(rng() % config.acc_depth()),
          static_cast<uint32_t>(rng() % std::max(config.inp_depth(), config.acc_depth())),
          static_cast<uint32_t>(rng() % config.wgt_depth())};
    const uint64_t bits = encode_uop(config, u);
    EXPECT_LT(bits, config.uop_bytes() == 4 ? (1ull << 32) : ~0ull);
    EXPECT_EQ(decode_uop(config, bits), u);
  }
}

TEST_P(Encoding, ValueTooWideIsAnErrorNamingTheField) {
  GemmInsn g;
  g.loop_out = 1u << 14;
  try {
    encode(config, g);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "GEMM field 'loop_out' = 16384 does not fit its 14 bits (max 16383)");
  }
  MemInsn m;
  m.sram_base = 1u << 20;
  EXPECT_ERROR(encode(config, m), "field 'sram_base' = 1048576 does not fit its");
  AluInsn a;
  a.imm = -40000;
  EXPECT_ERROR(encode(config, a), "ALU field 'imm' = -40000 does not fit its 16 signed bits");
}

TEST_P(Encoding, UnknownOpcodeIsAnError) {
  InsnWord w;
  w.lo = 7;  // opcode 7
  try {
    decode(config, w);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("unknown opcode 7"), std::string::npos) << e.what();
  }
}

// CLIP (ALU operation 5) is legal only where the config has its extension: both directions
// refuse it elsewhere, naming the key to switch on; the bits of every other instruction are the
// same with the extension on or off.
TEST_P(Encoding, ClipNeedsItsExtension) {
  AluInsn a;
  a.op = AluOp::kClip;
  a.use_imm = true;
  a.imm = clip_imm(-128, 127);
  HwConfig with = config, without = config;
  with.alu_clip = true;
  without.alu_clip = false;
  without.alu_hold = false;  // every extension off (the bundled default has HOLD on)
  without.gemm_assign = false;
  without.alu_shr_clip = false;
  without.store_inp = false;
  const InsnWord word = encode(with, a);
  EXPECT_EQ(decode(with, word), Insn(a));
  EXPECT_ERROR(encode(without, a), "extensions.alu_clip, which config");
  EXPECT_ERROR(decode(without, word), "switch it on in the config or use max and min");
  for (int i = 0; i < 200; ++i) {
    const Insn insn = random_insn();
    if (const auto *alu = std::get_if<AluInsn>(&insn);
        alu && (alu->op == AluOp::kClip || alu->op == AluOp::kShrClip))
      continue;
    if (const auto *gemm = std::get_if<GemmInsn>(&insn); gemm && gemm->assign) continue;
    if (const auto *m = std::get_if<MemInsn>(&insn); m && m->mem == MemId::kInp) continue;
    EXPECT_EQ(encode(with, insn), encode(without, insn)) << "instruction " << i;
  }
  EXPECT_EQ(clip_low(a.imm), -128);
  EXPECT_EQ(clip_high(a.imm), 127);
  // A package compiled with the extension is refused where it is off: the fingerprints differ.
  // Off, the config reads and writes as before extensions existed.
  EXPECT_NE(with.isa_fingerprint(), without.isa_fingerprint());
  EXPECT_EQ(to_yaml(without).find("extensions"), std::string::npos);
  EXPECT_TRUE(parse_config(to_yaml(with), "with.yaml").alu_clip);
  EXPECT_FALSE(parse_config(to_yaml(without), "without.yaml").alu_clip);
}

// SHR_CLIP (ALU operation 6) is legal only where the config has extensions.alu_shr_clip; with a
// vector operand its immediate (the bounds) travels in the word as any immediate does, and the
// key enters the fingerprint. The assembler reads `bounds=LO,HI` and the disassembler writes it.
TEST_P(Encoding, ShrClipNeedsItsExtension) {
  AluInsn a;
  a.op = AluOp::kShrClip;
  a.uop_end = 1;
  a.use_imm = false;
  a.imm = clip_imm(-20, 90);
  HwConfig with = config, without = config;
  with.alu_shr_clip = true;
  without.alu_shr_clip = false;
  const InsnWord word = encode(with, a);
  EXPECT_EQ(decode(with, word), Insn(a));
  EXPECT_ERROR(encode(without, a), "extensions.alu_shr_clip, which config");
  EXPECT_ERROR(decode(without, word), "switch it on in the config or use shr, then clip");
  EXPECT_NE(with.isa_fingerprint(), without.isa_fingerprint());
  EXPECT_TRUE(parse_config(to_yaml(with), "with.yaml").alu_shr_clip);
  const std::string text = format_insn(with, a);
  EXPECT_NE(text.find("alu.shr_clip"), std::string::npos) << text;
  EXPECT_NE(text.find("bounds=-20,90"), std::string::npos) << text;
}

// GEMM assign (opcode 5) is legal only where the config has extensions.gemm_assign: encoding,
// decoding and the assembler refuse it elsewhere, naming the key; it is GEMM's fields under its
// own opcode, so every other instruction keeps its bits, and the key enters the fingerprint.
TEST_P(Encoding, AssignNeedsItsExtension) {
  GemmInsn g;
  g.uop_end = 3;
  g.loop_out = 5;
  g.loop_in = 7;
  g.acc = {7, 1};
  g.assign = true;
  HwConfig with = config, without = config;
  with.gemm_assign = true;
  without.gemm_assign = false;
  const InsnWord word = encode(with, g);
  EXPECT_EQ(word.lo & 7u, kGemmAssignOpcode);  // the opcode: bits 0-2
  EXPECT_EQ(decode(with, word), Insn(g));
  GemmInsn plain = g;
  plain.assign = false;
  InsnWord as_gemm = word;  // the same fields under GEMM's opcode
  as_gemm.lo = (word.lo & ~uint64_t{7}) | static_cast<uint64_t>(Opcode::kGemm);
  EXPECT_EQ(encode(without, plain), as_gemm);
  EXPECT_ERROR(encode(without, g), "extensions.gemm_assign, which config");
  EXPECT_ERROR(decode(without, word), "or zero the accumulators with a reset GEMM");
  for (int i = 0; i < 200; ++i) {
    const Insn insn = random_insn();
    if (const auto *gemm = std::get_if<GemmInsn>(&insn); gemm && gemm->assign) continue;
    EXPECT_EQ(encode(with, insn), encode(without, insn)) << "instruction " << i;
  }
  EXPECT_NE(with.isa_fingerprint(), without.isa_fingerprint());
  EXPECT_TRUE(parse_config(to_yaml(with), "with.yaml").gemm_assign);
  EXPECT_FALSE(parse_config(to_yaml(without), "without.yaml").gemm_assign);
}

// STORE INP (a STORE whose mem is INP) is legal only where the config has
// extensions.store_inp: encoding, decoding and the assembler refuse it elsewhere, naming the
// key; every other instruction keeps its bits; the key enters the fingerprint, and a config
// text without it reads as before (to_yaml writes it only when on). Its dram_base is an INP
// index, which the disassembler prints as a number and the assembler reads back.
TEST_P(Encoding, StoreInpNeedsItsExtension) {
  if (config.block_in != config.block_out) GTEST_SKIP() << "STORE INP needs a square core";
  MemInsn m;
  m.opcode = Opcode::kStore;
  m.mem = MemId::kInp;
  m.sram_base = 3;
  m.dram_base = 5;
  m.y_size = 2;
  m.x_size = 3;
  m.x_stride = 4;
  m.deps.pop_prev = true;
  HwConfig with = config, without = config;
  with.store_inp = true;
  without.store_inp = false;
  const InsnWord word = encode(with, m);
  EXPECT_EQ(decode(with, word), Insn(m));
  EXPECT_ERROR(encode(without, m), "extensions.store_inp, which config");
  EXPECT_ERROR(decode(without, word), "or store to OUT and load the tiles back");
  for (int i = 0; i < 200; ++i) {
    const Insn insn = random_insn();
    if (const auto *s = std::get_if<MemInsn>(&insn);
        s && s->opcode == Opcode::kStore && s->mem == MemId::kInp)
      continue;
    EXPECT_EQ(encode(with, insn), encode(without, insn)) << "instruction " << i;
  }
  EXPECT_NE(with.isa_fingerprint(), without.isa_fingerprint());
  EXPECT_TRUE(parse_config(to_yaml(with), "with.yaml").store_inp);
  EXPECT_FALSE(parse_config(to_yaml(without), "without.yaml").store_inp);
  EXPECT_EQ(to_yaml(without).find("store_inp"), std::string::npos);
  const std::string text = format_insn(with, m);
  EXPECT_EQ(text.rfind("store.inp sram=3 dram=5 y=2 x=3 stride=4", 0), 0u) << text;
}

// HOLD (extensions.alu_hold) changes timing only: the same words and ISA fingerprint, and the
// key reads back as written.
TEST(EncodingExtensions, HoldChangesNeitherWordsNorFingerprint) {
  HwConfig off = config_named("small"), on = off;
  on.alu_hold = true;
  EXPECT_EQ(off.isa_fingerprint(), on.isa_fingerprint());
  EXPECT_TRUE(parse_config(to_yaml(on), "on.yaml").alu_hold);
  EXPECT_FALSE(parse_config(to_yaml(off), "off.yaml").alu_hold);
  AluInsn a;
  a.uop_end = 1;
  a.loop_in = 4;
  EXPECT_EQ(encode(on, a), encode(off, a));
}

// The layout is the one documented in isa/README.md for the default config.
TEST(EncodingLayout, DefaultGemmFieldsAsDocumented) {
  const HwConfig c = config_named("default");
  EXPECT_EQ(insn_bits(c, Opcode::kGemm), 128);
  GemmInsn g;
  g.uop_begin = 1;
  g.loop_out = g.loop_in = 0;
  const InsnWord w = encode(c, g);
  EXPECT_EQ(w.lo, (uint64_t{1} << 8) | 2);  // opcode 2 in bits 0-2, uop_begin from bit 8
  EXPECT_EQ(w.hi, 0u);
  g.overlap = true;
  EXPECT_EQ(encode(c, g).hi, uint64_t{1} << 63);  // overlap: the last bit, 127
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, Encoding,
                         ::testing::Values("default", "small", "wide", "small+alu_clip",
                                           "small+gemm_assign", "small+store_inp"),
                         [](const auto &info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '+', '_');
                           return n;
                         });

}  // namespace
}  // namespace vacc::isa
