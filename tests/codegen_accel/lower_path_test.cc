// The lowering path itself (compiler/lower/lower.cc): the passes of both IR forms run in
// order through one runner that records, dumps and verifies them; the command-list verifier
// rejects a stream whose engines share a scratchpad tile without a token; tokens are derived
// once (none in the loop IR of a program without load/store relays).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands/codegen_commands.h"
#include "program_kit.h"
#include "vacc/lower/lower.h"
#include "vacc/tir/printer.h"

namespace vacc {
namespace {

lower::Conv2dParams conv() {
  lower::Conv2dParams p;
  p.in_channels = 32;
  p.out_channels = 64;
  p.height = p.width = 8;
  return p;
}

TEST(LowerPath, PassesOfBothFormsRunInOrderAndAreDumped) {
  const isa::HwConfig c = test::config_named("default");
  char tmpl[] = "/tmp/vacc_lower_path_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  lower::LowerOptions o;
  o.dump_dir = tmpl;
  const lower::LoweredLayer l = lower::compile_conv2d(c, conv(), o, "c");
  ASSERT_EQ(l.schedule.vthreads, 2);
  std::vector<std::string> names;
  for (const auto &r : l.passes) names.push_back(r.name);
  const std::vector<std::string> want = {"simplify",
                                         "lower_dma_copies",
                                         "tensorize",
                                         "inject_virtual_threads",
                                         "plan_scratchpads",
                                         "fold_uop_loops",
                                         "check_accelerator_only",
                                         "flatten",
                                         "merge_reductions",
                                         "stagger_threads",
                                         "merge_kernels",
                                         "coalesce_dma",
                                         "split_first_gemms",
                                         "assign_first_gemms",  // the default has gemm_assign
                                         "reset_on_alu",
                                         "order_compute_dispatch",
                                         "insert_tokens",
                                         "mark_overlap"};
  EXPECT_EQ(names, want);
  // One numbering across both forms: 00_input.tir, then one file per pass.
  EXPECT_TRUE(std::filesystem::exists(std::string(tmpl) + "/00_input.tir"));
  EXPECT_TRUE(std::filesystem::exists(std::string(tmpl) + "/07_check_accelerator_only.tir"));
  EXPECT_TRUE(std::filesystem::exists(std::string(tmpl) + "/08_flatten.cmd"));
  const std::string last = std::string(tmpl) + "/18_mark_overlap.cmd";
  ASSERT_TRUE(std::filesystem::exists(last));
  // The last dump is the final command list (but for its header line, which names the list).
  std::ifstream in(last);
  std::stringstream text;
  text << in.rdbuf();
  auto body = [](const std::string &t) { return t.substr(t.find('\n')); };
  EXPECT_EQ(body(text.str()), body(isa::to_text(l.commands)));
  std::filesystem::remove_all(tmpl);
}

TEST(LowerPath, TokensAreDerivedOnceOnTheCommandList) {
  const isa::HwConfig c = test::config_named("default");
  const lower::LoweredLayer l = lower::compile_conv2d(c, conv(), {}, "c");
  const std::string ir = tir::to_string(l.final_ir);
  EXPECT_EQ(ir.find("dep."), std::string::npos) << ir;
  int pushes = 0;
  for (const isa::Command &cmd : l.commands.commands)
    if (const auto *d = std::get_if<isa::DepCommand>(&cmd)) pushes += d->push;
  EXPECT_GT(pushes, 0);
}

lower::CodegenCommand load_inp(uint32_t sram) {
  isa::DmaCommand d;
  d.mem = isa::MemId::kInp;
  d.sram = sram;
  return {d, {}};
}

lower::CodegenCommand gemm_reading_inp(uint32_t src) {
  isa::GemmCommand g;
  return {g, {isa::Uop{0, src, 0}}};
}

TEST(LowerPathDeathTest, VerifierRejectsATileSharedWithoutAToken) {
  const isa::HwConfig c = test::config_named("default");
  // A load writes INP tile 3; the GEMM reads it with a token in between: accepted.
  lower::CodegenCommands ok = {
      load_inp(3),
      {isa::DepCommand{true, isa::Engine::kLoad, isa::Engine::kCompute}, {}},
      {isa::DepCommand{false, isa::Engine::kLoad, isa::Engine::kCompute}, {}},
      gemm_reading_inp(3)};
  lower::verify_commands(ok, c, "ok");
  // The same without the token: a race the hardware would lose.
  lower::CodegenCommands racy = {
      load_inp(3),
      {isa::DepCommand{true, isa::Engine::kLoad, isa::Engine::kCompute}, {}},
      gemm_reading_inp(3)};
  EXPECT_DEATH(lower::verify_commands(racy, c, "racy"), "no dependency token in between");
  // A pop no push precedes: the program would deadlock.
  lower::CodegenCommands deadlock = {
      {isa::DepCommand{false, isa::Engine::kLoad, isa::Engine::kCompute}, {}}, gemm_reading_inp(3)};
  EXPECT_DEATH(lower::verify_commands(deadlock, c, "deadlock"), "never pushed");
}

}  // namespace
}  // namespace vacc
