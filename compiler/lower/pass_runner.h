// The one pass runner of the lowering, for both IR forms (loop IR, command lists): each pass is
// run by name, timed, logged at debug level, verified after (when asked: tir::verify for loop
// IR, verify_commands for command lists) and dumped as NN_<pass>.tir / NN_<pass>.cmd into the
// dump directory, one numbering across both forms in the order the passes ran.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "commands/codegen_commands.h"
#include "vacc/isa/config.h"
#include "vacc/lower/lower.h"
#include "vacc/tir/func.h"

namespace vacc::lower {

class PassRunner {
 public:
  // `unit` names what is lowered (a layer) in the log; the dump directory is options.dump_dir,
  // else $VACC_DUMP_IR, else none.
  PassRunner(std::string unit, const isa::HwConfig &config, const LowerOptions &options,
             std::vector<PassRecord> *records);

  // Runs `pass` on `in` as the pass `name`; returns its output.
  template <typename Out, typename In, typename Pass>
  Out run(const std::string &name, Pass &&pass, const In &in) {
    const auto t0 = std::chrono::steady_clock::now();
    Out out = pass(in);
    finish(
        name,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    after(name, out);
    return out;
  }

  // The input of the first pass, dumped as 00_input.tir and verified.
  void input(const tir::Func &f);
  // The DRAM buffers the command lists' DMAs name in dumps (filled by flatten).
  void name_buffers(const std::vector<isa::CommandBuffer> *buffers) { buffers_ = buffers; }

 private:
  void finish(const std::string &name, double ms);
  void after(const std::string &name, const tir::Func &f);
  void after(const std::string &name, const CodegenCommands &ops);
  void dump(const std::string &name, const char *ext, const std::string &text);

  std::string unit_;
  const isa::HwConfig &config_;
  const LowerOptions &options_;
  std::vector<PassRecord> *records_;
  std::string dir_;
  int index_ = 0;
  const std::vector<isa::CommandBuffer> *buffers_ = nullptr;
};

}  // namespace vacc::lower
