#include "vacc/compiler/pipeline.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "vacc/support/error.h"
#include "vacc/tir/arith.h"
#include "vacc/tir/passes/check_accelerator_only.h"
#include "vacc/tir/passes/fold_uop_loops.h"
#include "vacc/tir/passes/inject_virtual_threads.h"
#include "vacc/tir/passes/insert_dependencies.h"
#include "vacc/tir/passes/lower_dma_copies.h"
#include "vacc/tir/passes/plan_scratchpads.h"
#include "vacc/tir/passes/tensorize.h"
#include "vacc/tir/printer.h"
#include "vacc/tir/verify.h"

namespace vacc::compiler {
namespace {

using Pass = std::function<tir::Func(const tir::Func &, const isa::HwConfig &)>;

// The pipeline, in order.
const std::vector<std::pair<std::string, Pass>> &passes() {
  static const std::vector<std::pair<std::string, Pass>> list = {
      {"simplify", [](const tir::Func &f, const isa::HwConfig &) { return tir::simplify(f); }},
      {"lower_dma_copies", tir::lower_dma_copies},
      {"tensorize", tir::tensorize},
      {"inject_virtual_threads",
       [](const tir::Func &f, const isa::HwConfig &) { return tir::inject_virtual_threads(f); }},
      {"plan_scratchpads", tir::plan_scratchpads},
      {"fold_uop_loops",
       [](const tir::Func &f, const isa::HwConfig &) { return tir::fold_uop_loops(f); }},
      {"insert_dependencies",
       [](const tir::Func &f, const isa::HwConfig &) { return tir::insert_dependencies(f); }},
      {"check_accelerator_only",
       [](const tir::Func &f, const isa::HwConfig &) { return tir::check_accelerator_only(f); }},
  };
  return list;
}

void dump(const std::string &dir, int index, const std::string &name, const tir::Func &f) {
  std::filesystem::create_directories(dir);
  std::string path = fmt::format("{}/{:02d}_{}.tir", dir, index, name);
  std::ofstream out(path);
  if (!out) fail("--dump-ir: cannot write '{}'", path);
  out << tir::to_string(f);
}

}  // namespace

std::vector<std::string> pipeline_passes() {
  std::vector<std::string> names;
  for (const auto &p : passes()) names.push_back(p.first);
  return names;
}

tir::Func run_pipeline(const tir::Func &input, const isa::HwConfig &config,
                       const PipelineOptions &options, std::vector<PassRecord> *records) {
  std::string dir = options.dump_dir;
  if (dir.empty()) {
    if (const char *env = std::getenv("VACC_DUMP_IR")) dir = env;
  }
  if (!dir.empty()) dump(dir, 0, "input", input);
  if (options.verify) tir::verify(input);
  tir::Func f = input;
  int index = 1;
  for (const auto &[name, pass] : passes()) {
    auto t0 = std::chrono::steady_clock::now();
    f = pass(f, config);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    spdlog::debug("pass {:<24} {:8.3f} ms  ({})", name, ms, f.name);
    if (records) records->push_back({name, ms});
    if (options.verify) tir::verify(f);
    if (!dir.empty()) dump(dir, index, name, f);
    if (options.after_pass) options.after_pass(name, f);
    ++index;
  }
  return f;
}

}  // namespace vacc::compiler
