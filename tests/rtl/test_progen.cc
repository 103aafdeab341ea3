// progen's programs are valid for their config: fsim (which bounds-checks every access and
// enforces the token protocol, reporting deadlocks) runs each to completion, the same seed
// gives the same bytes, and the programs really vary (double buffering, every ALU op).
#include <gtest/gtest.h>

#include <algorithm>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/encoding.h"
#include "vacc/progen/progen.h"
#include "vacc/simulator/fsim.h"
#include "vacc/support/error.h"

namespace vacc::progen {
namespace {

class Progen : public ::testing::TestWithParam<std::string> {};

// "NAME+alu_clip", "NAME+alu_hold", "NAME+gemm_assign", "NAME+store_inp": the bundled config
// with that extension on.
isa::HwConfig param_config(const std::string &param) {
  const size_t plus = param.find('+');
  isa::HwConfig c = isa::load_config(isa::resolve_config_path(param.substr(0, plus)));
  c.alu_clip = param.find("+alu_clip") != std::string::npos;
  c.alu_hold = param.find("+alu_hold") != std::string::npos;
  c.gemm_assign = param.find("+gemm_assign") != std::string::npos;
  c.store_inp = param.find("+store_inp") != std::string::npos;
  return c;
}

TEST_P(Progen, ProgramsRunOnFsimAndAreDeterministic) {
  const isa::HwConfig config = param_config(GetParam());
  std::set<int> alu_ops;
  int changed = 0, double_buffered = 0, padded = 0, immediates = 0, negative_shifts = 0;
  int held = 0;  // vector ALUs with one micro-op and src factors 0 (extensions.alu_hold)
  int assigned = 0;  // GEMMs with assign (extensions.gemm_assign)
  int stored_inp = 0, strided_inp = 0;  // STORE INPs, and those with rows apart (store_inp)
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const isa::Program p = generate_program(config, seed);
    ASSERT_EQ(p.dram, generate_program(config, seed).dram) << "seed " << seed;
    std::vector<uint8_t> dram = p.dram;
    sim::Fsim fsim(config);
    try {
      fsim.run(dram, p.insn_offset, p.insn_count);
    } catch (const Error &e) {
      FAIL() << describe_program(config, seed) << ": " << e.what();
    }
    changed += dram != p.dram;  // a store of reset (zero) tiles leaves DRAM as it was
    if (describe_program(config, seed).find("double") != std::string::npos) ++double_buffered;
    for (const isa::Insn &insn : p.instructions(config)) {
      if (const auto *a = std::get_if<isa::AluInsn>(&insn)) {
        alu_ops.insert(static_cast<int>(a->op));
        immediates += a->use_imm;
        negative_shifts += a->use_imm && a->op == isa::AluOp::kShr && a->imm < 0;
        held += !a->use_imm && a->uop_end == a->uop_begin + 1 && a->src == isa::LoopFactors{} &&
                a->loop_out * a->loop_in > 1;
      }
      if (const auto *g = std::get_if<isa::GemmInsn>(&insn)) assigned += g->assign;
      if (const auto *m = std::get_if<isa::MemInsn>(&insn)) {
        padded += m->pad_top + m->pad_bottom + m->pad_left + m->pad_right > 0;
        const bool to_inp = m->opcode == isa::Opcode::kStore && m->mem == isa::MemId::kInp;
        stored_inp += to_inp;
        strided_inp += to_inp && m->y_size > 1 && m->x_stride > m->x_size;
      }
    }
  }
  size_t available = 0;  // every operation the config has, extensions included
  for (int op = 0; op < isa::kNumAluOps; ++op)
    available += isa::alu_op_unavailable(config, static_cast<isa::AluOp>(op)).empty();
  EXPECT_EQ(alu_ops.size(), available);
  for (int op : alu_ops)
    EXPECT_EQ(isa::alu_op_unavailable(config, static_cast<isa::AluOp>(op)), "");
  EXPECT_GT(changed, 200);
  EXPECT_GT(double_buffered, 100);
  EXPECT_GT(padded, 100);
  EXPECT_GT(immediates, 100);
  EXPECT_GT(negative_shifts, 10);
  if (config.alu_hold) EXPECT_GT(held, 200);
  if (config.gemm_assign)
    EXPECT_GT(assigned, 200);
  else
    EXPECT_EQ(assigned, 0);
  if (config.store_inp) {
    EXPECT_GT(stored_inp, 200);
    EXPECT_GT(strided_inp, 20);
  } else {
    EXPECT_EQ(stored_inp, 0);
  }
}

// The scratchpads are not cleared at the start of a run (isa/README.md): a program must read
// only entries it wrote in the same run. Walks each program in program order (a race-free
// program reads what the preceding write in program order left) and returns the first read of
// an unwritten entry, or "".
std::string first_unwritten_read(const isa::HwConfig &config, const isa::Program &p) {
  std::vector<std::vector<bool>> written(isa::kNumMemIds);
  written[static_cast<int>(isa::MemId::kUop)].assign(config.uop_depth(), false);
  written[static_cast<int>(isa::MemId::kInp)].assign(config.inp_depth(), false);
  written[static_cast<int>(isa::MemId::kWgt)].assign(config.wgt_depth(), false);
  written[static_cast<int>(isa::MemId::kAcc)].assign(config.acc_depth(), false);
  std::vector<isa::Uop> uop_ram(config.uop_depth());
  const std::vector<isa::Insn> insns = p.instructions(config);
  std::string error;
  auto read = [&](size_t i, isa::MemId mem, uint64_t idx, const char *what) {
    const auto &w = written[static_cast<int>(mem)];
    if (error.empty() && (idx >= w.size() || !w[idx]))
      error = "instruction " + std::to_string(i) + " (" + isa::insn_label(insns[i]) + ") reads " +
              what + " entry " + std::to_string(idx) + " before writing it";
  };
  auto write = [&](isa::MemId mem, uint64_t idx) {
    auto &w = written[static_cast<int>(mem)];
    if (idx < w.size()) w[idx] = true;
  };
  for (size_t i = 0; i < insns.size() && error.empty(); ++i) {
    if (const auto *m = std::get_if<isa::MemInsn>(&insns[i])) {
      const uint64_t h = m->pad_top + m->y_size + m->pad_bottom;
      const uint64_t w = m->pad_left + m->x_size + m->pad_right;
      if (m->opcode == isa::Opcode::kStore) {
        for (uint64_t k = 0; k < uint64_t{m->y_size} * m->x_size; ++k)
          read(i, isa::MemId::kAcc, m->sram_base + k, "ACC");
        if (m->mem == isa::MemId::kInp)  // STORE INP: rows x_stride apart from dram_base
          for (uint64_t y = 0; y < m->y_size; ++y)
            for (uint64_t x = 0; x < m->x_size; ++x)
              write(isa::MemId::kInp, m->dram_base + y * m->x_stride + x);
        continue;
      }
      for (uint64_t k = 0; k < h * w; ++k) write(m->mem, m->sram_base + k);
      if (m->mem == isa::MemId::kUop) {
        const int ub = config.uop_bytes();
        for (uint32_t x = 0; x < m->x_size; ++x) {
          uint64_t bits = 0;
          std::memcpy(&bits, p.dram.data() + uint64_t{m->dram_base + x} * ub, ub);
          uop_ram[m->sram_base + x] = isa::decode_uop(config, bits);
        }
      }
    } else if (const auto *g = std::get_if<isa::GemmInsn>(&insns[i])) {
      for (uint32_t a = 0; a < g->loop_out; ++a)
        for (uint32_t b = 0; b < g->loop_in; ++b)
          for (uint32_t u = g->uop_begin; u < g->uop_end; ++u) {
            read(i, isa::MemId::kUop, u, "UOP");
            const isa::Uop &op = uop_ram[u];
            const uint64_t d = op.dst + a * g->acc.out + b * g->acc.in;
            if (!g->reset) {
              if (!g->assign) read(i, isa::MemId::kAcc, d, "ACC");  // assign: written, not read
              read(i, isa::MemId::kInp, op.src + a * g->inp.out + b * g->inp.in, "INP");
              read(i, isa::MemId::kWgt, op.wgt + a * g->wgt.out + b * g->wgt.in, "WGT");
            }
            write(isa::MemId::kAcc, d);
          }
    } else if (const auto *al = std::get_if<isa::AluInsn>(&insns[i])) {
      for (uint32_t a = 0; a < al->loop_out; ++a)
        for (uint32_t b = 0; b < al->loop_in; ++b)
          for (uint32_t u = al->uop_begin; u < al->uop_end; ++u) {
            read(i, isa::MemId::kUop, u, "UOP");
            const isa::Uop &op = uop_ram[u];
            const uint64_t d = op.dst + a * al->dst.out + b * al->dst.in;
            read(i, isa::MemId::kAcc, d, "ACC");
            if (!al->use_imm)
              read(i, isa::MemId::kAcc, op.src + a * al->src.out + b * al->src.in, "ACC");
            write(isa::MemId::kAcc, d);
          }
    }
  }
  return error;
}

TEST_P(Progen, ProgramsReadOnlyScratchpadEntriesTheyWrote) {
  const isa::HwConfig config = param_config(GetParam());
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const isa::Program p = generate_program(config, seed);
    const std::string error = first_unwritten_read(config, p);
    EXPECT_TRUE(error.empty()) << describe_program(config, seed) << ": " << error;
  }
}

// The checker itself: a GEMM accumulating into ACC that nothing wrote is caught.
TEST(ProgenChecker, FindsAReadOfAnUnwrittenEntry) {
  const isa::HwConfig config = isa::load_config(isa::resolve_config_path("small"));
  isa::ProgramBuilder b(config);
  const uint32_t inp = b.add_region("a", isa::RegionKind::kInput, isa::MemId::kInp, 4);
  const uint32_t wgt = b.add_region("w", isa::RegionKind::kWeight, isa::MemId::kWgt, 4);
  const uint32_t uop = b.add_uop(isa::Uop{3, 0, 0});
  auto load = [&](isa::MemId mem, uint32_t dram, uint32_t n) {
    isa::MemInsn m;
    m.mem = mem;
    m.dram_base = dram;
    m.y_size = 1;
    m.x_size = m.x_stride = n;
    b.emit(m);
  };
  load(isa::MemId::kUop, b.uop_region_base() + uop, 1);
  load(isa::MemId::kInp, inp, 4);
  load(isa::MemId::kWgt, wgt, 4);
  isa::GemmInsn g;  // acc[3] += ... with acc[3] never written
  g.uop_begin = 0;
  g.uop_end = 1;
  b.emit(g);
  b.emit(isa::FinishInsn{});
  const std::string error = first_unwritten_read(config, b.finish());
  EXPECT_NE(error.find("reads ACC entry 3 before writing it"), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(Configs, Progen,
                         ::testing::Values("default", "small", "wide", "small+alu_clip",
                                           "small+alu_hold", "small+gemm_assign", "small+store_inp",
                                           "default+store_inp"),
                         [](const auto &info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '+', '_');
                           return n;
                         });

}  // namespace
}  // namespace vacc::progen
