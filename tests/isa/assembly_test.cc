// Assembly <-> program round trips, program files on disk, and .npy files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../expect_error.h"
#include "vacc/isa/assembly.h"
#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"
#include "vacc/support/npy.h"

namespace vacc::isa {
namespace {

HwConfig config_named(const std::string &name) {
  return load_config(std::string(VACC_TEST_CONFIG_DIR) + "/" + name + ".yaml");
}

std::string temp_path(const std::string &name) {
  return (std::filesystem::temp_directory_path() / ("vacc_test_" + name)).string();
}

const char *kSource = R"(
# a small program touching every instruction kind
.region a   input  inp 8 random 1
.region w   weight wgt 2 random 2
.region b   weight acc 4
.data b 0 01000000ffffffff
.region c   output out 8
.uop dst=0 src=0 wgt=0
.uop dst=1 src=1 wgt=1
load.inp  sram=0 dram=a y=2 x=4 stride=4 pad=1,0,0,2 push_next
load.wgt  sram=0 dram=w+1 x=1
load.uop  sram=0 dram=@uops x=2
load.acc  sram=16 dram=b x=4
gemm      uops=0:2 loop=2,3 acc=4,1 inp=4,1 wgt=0,0 reset pop_prev
alu.shr   uops=0:1 loop=1,8 dst=0,1 src=0,1 imm=-3 overlap
alu.add   uops=0:1 loop=1,4 dst=0,1 src=16,1 push_next
store.out sram=0 dram=c y=1 x=8 stride=8 pop_prev push_prev
finish pop_next
)";

TEST(Assembly, DisassemblyReassemblesToTheSameBytes) {
  for (const char *name : {"default", "small", "wide"}) {
    const HwConfig config = config_named(name);
    const Program p = assemble(config, kSource, "inline.s");
    const std::string text = disassemble(config, p);
    const Program again = assemble(config, text, "disassembly.s");
    EXPECT_EQ(again.dram, p.dram) << name << "\n" << text;
    EXPECT_EQ(again.insn_offset, p.insn_offset);
    EXPECT_EQ(again.insn_count, p.insn_count);
    EXPECT_EQ(disassemble(config, again), text);
  }
}

TEST(Assembly, OperandsAndDefaultsLandInTheFields) {
  const HwConfig config = config_named("default");
  const Program p = assemble(config, kSource, "inline.s");
  const auto insns = p.instructions(config);
  ASSERT_EQ(insns.size(), 9u);
  const auto &load = std::get<MemInsn>(insns[0]);
  EXPECT_EQ(load.mem, MemId::kInp);
  EXPECT_EQ(load.y_size, 2u);
  EXPECT_EQ(load.x_stride, 4u);
  EXPECT_EQ(load.pad_top, 1u);
  EXPECT_EQ(load.pad_right, 2u);
  EXPECT_TRUE(load.deps.push_next);
  EXPECT_EQ(load.dram_base, p.find_region("a")->first_element(config));
  const auto &wgt = std::get<MemInsn>(insns[1]);
  EXPECT_EQ(wgt.dram_base, p.find_region("w")->first_element(config) + 1);
  EXPECT_EQ(wgt.y_size, 1u);
  EXPECT_EQ(wgt.x_stride, 1u);  // stride defaults to x
  const auto &uops = std::get<MemInsn>(insns[2]);
  EXPECT_EQ(uops.dram_base, p.find_region("uops")->first_element(config));
  const auto &gemm = std::get<GemmInsn>(insns[4]);
  EXPECT_TRUE(gemm.reset);
  EXPECT_EQ(gemm.loop_out, 2u);
  EXPECT_EQ(gemm.loop_in, 3u);
  EXPECT_EQ(gemm.acc, (LoopFactors{4, 1}));
  EXPECT_FALSE(gemm.overlap);
  const auto &shr = std::get<AluInsn>(insns[5]);
  EXPECT_EQ(shr.op, AluOp::kShr);
  EXPECT_TRUE(shr.use_imm);
  EXPECT_EQ(shr.imm, -3);
  EXPECT_TRUE(shr.overlap);
  EXPECT_FALSE(std::get<AluInsn>(insns[6]).use_imm);
  EXPECT_FALSE(std::get<AluInsn>(insns[6]).overlap);
  // .data wrote bytes 1,0,0,0,ff,ff,ff,ff at the start of region b.
  const Region *b = p.find_region("b");
  EXPECT_EQ(p.dram[b->offset], 1);
  EXPECT_EQ(p.dram[b->offset + 4], 0xff);
}

// SHR_CLIP's bounds: `bounds=LO,HI` beside its vector operand, packed as CLIP's immediate; the
// disassembly prints them back. Bounds outside 8 signed bits, a second immediate form and
// bounds on another operation are refused at their line.
TEST(Assembly, ShrClipTakesItsBoundsBesideTheVectorOperand) {
  HwConfig config = config_named("small");
  config.alu_shr_clip = true;
  const Program p =
      assemble(config, "alu.shr_clip uops=0:1 src=0,0 bounds=-20,90\nfinish\n", "shr_clip.s");
  const AluInsn a = std::get<AluInsn>(p.instructions(config).at(0));
  EXPECT_EQ(a.op, AluOp::kShrClip);
  EXPECT_FALSE(a.use_imm);
  EXPECT_EQ(a.imm, clip_imm(-20, 90));
  EXPECT_NE(
      disassemble(config, p).find("alu.shr_clip uops=0:1 loop=1,1 dst=0,0 src=0,0 bounds=-20,90"),
      std::string::npos)
      << disassemble(config, p);
  EXPECT_ERROR(assemble(config, "alu.shr_clip uops=0:1 bounds=-200,5\n", "b.s"),
               "b.s:1:30: bound -200 outside [-128, 127] (each bound is 8 signed bits)");
  EXPECT_ERROR(assemble(config, "alu.shr_clip uops=0:1 bounds=1,2 imm=3\n", "c.s"),
               "c.s:1:1: give one of imm=, unused_imm= and bounds=");
  EXPECT_ERROR(assemble(config, "alu.shr uops=0:1 bounds=1,2\n", "d.s"),
               "d.s:1:18: 'alu.shr' has no operand 'bounds'");
}

// STORE INP (extensions.store_inp): `store.inp sram=ACC dram=INP` lands in STORE's fields with
// mem inp; its dram= is an INP index, which the disassembly prints as the number even where a
// DRAM region's elements have that index, so the text reassembles to the same bytes.
TEST(Assembly, StoreInpTakesAnInpIndex) {
  HwConfig config = config_named("small");
  config.store_inp = true;
  const char *source =
      ".region o output out 8\n"
      "store.inp sram=2 dram=5 y=2 x=3 stride=4 pop_prev\n"
      "store.out sram=0 dram=o x=8 push_prev\n"
      "finish\n";
  const Program p = assemble(config, source, "store_inp.s");
  const MemInsn m = std::get<MemInsn>(p.instructions(config).at(0));
  EXPECT_EQ(m.opcode, Opcode::kStore);
  EXPECT_EQ(m.mem, MemId::kInp);
  EXPECT_EQ(m.sram_base, 2u);
  EXPECT_EQ(m.dram_base, 5u);
  EXPECT_EQ(m.x_stride, 4u);
  ASSERT_LE(p.find_region("o")->first_element(config), 5u);  // 5 also lies in region o
  const std::string text = disassemble(config, p);
  EXPECT_NE(text.find("store.inp sram=2 dram=5 y=2 x=3 stride=4"), std::string::npos) << text;
  EXPECT_EQ(assemble(config, text, "again.s").dram, p.dram) << text;
}

TEST(Assembly, RandomRegionsAreSeeded) {
  const HwConfig config = config_named("small");
  const Program p1 = assemble(config, kSource, "a.s");
  const Program p2 = assemble(config, kSource, "b.s");
  EXPECT_EQ(p1.dram, p2.dram);
  const Region *a = p1.find_region("a");
  int nonzero = 0;
  for (uint64_t i = 0; i < a->bytes; ++i) nonzero += p1.dram[a->offset + i] != 0;
  EXPECT_GT(nonzero, int(a->bytes) / 2);
}

TEST(ProgramFile, SaveLoadRoundTrip) {
  const HwConfig config = config_named("default");
  const Program p = assemble(config, kSource, "inline.s");
  const std::string path = temp_path("roundtrip.vprog");
  save_program(p, path);
  ASSERT_TRUE(is_program_file(path));
  const Program q = load_program(path);
  EXPECT_EQ(q.dram, p.dram);
  EXPECT_EQ(q.insn_offset, p.insn_offset);
  EXPECT_EQ(q.insn_count, p.insn_count);
  ASSERT_EQ(q.regions.size(), p.regions.size());
  for (size_t i = 0; i < p.regions.size(); ++i) {
    EXPECT_EQ(q.regions[i].name, p.regions[i].name);
    EXPECT_EQ(q.regions[i].offset, p.regions[i].offset);
    EXPECT_EQ(q.regions[i].bytes, p.regions[i].bytes);
    EXPECT_EQ(q.regions[i].kind, p.regions[i].kind);
  }
  q.check_config(config);
  EXPECT_ERROR(q.check_config(config_named("small")),
               "program was built for config 'default', whose ISA layout differs from config "
               "'small'");
  std::filesystem::remove(path);
}

TEST(ProgramFile, CorruptFilesAreErrorsNamingTheFile) {
  const std::string path = temp_path("corrupt.vprog");
  {
    std::ofstream out(path, std::ios::binary);
    out << "not a program";
  }
  try {
    load_program(path);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(path + ": not a vacc program file"), std::string::npos)
        << e.what();
  }
  // A valid file cut short.
  const HwConfig config = config_named("default");
  save_program(assemble(config, kSource, "inline.s"), path);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 10);
  try {
    load_program(path);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("memory image is"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(Npy, WriteReadRoundTrip) {
  NpyArray a;
  a.dtype = "i4";
  a.shape = {2, 3};
  for (int32_t v : {1, -2, 3, -4, 5, 2147483647}) {
    uint8_t b[4];
    std::memcpy(b, &v, 4);
    a.data.insert(a.data.end(), b, b + 4);
  }
  const std::string path = temp_path("a.npy");
  write_npy(path, a);
  const NpyArray b = read_npy(path);
  EXPECT_EQ(b.dtype, "i4");
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(b.data, a.data);
  NpyArray c;
  c.dtype = "i1";
  c.shape = {5};
  c.data = {1, 2, 3, 4, 5};
  write_npy(path, c);
  EXPECT_EQ(read_npy(path).shape, std::vector<int64_t>{5});
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace vacc::isa
