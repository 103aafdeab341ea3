// The accelerator lowering pipeline: the passes that take a scheduled operator's loop IR to
// the final IR that accelerator code generation reads (DMA, GEMM, ALU and dependency-token
// statements inside plain loops). pipeline.cc lists the passes in order; each is logged and
// timed by name, the verifier runs after each when asked, and the IR after each pass can be
// written to a directory (an option, or the VACC_DUMP_IR environment variable).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/tir/func.h"

namespace vacc::compiler {

struct PipelineOptions {
  std::string dump_dir;  // "" = $VACC_DUMP_IR if set, else no dump
  bool verify = true;    // run tir::verify after every pass
  // Called with each pass's name and output (tests run the interpreter on every stage).
  std::function<void(const std::string &, const tir::Func &)> after_pass;
};

struct PassRecord {
  std::string name;
  double ms = 0;
};

// The pass names, in order.
std::vector<std::string> pipeline_passes();

// Runs every pass on f. Dumps NN_<pass>.tir files (00_input.tir first) when a dump dir is
// set. Throws vacc::Error from the pass that rejects the schedule.
tir::Func run_pipeline(const tir::Func &f, const isa::HwConfig &config,
                       const PipelineOptions &options = {},
                       std::vector<PassRecord> *records = nullptr);

}  // namespace vacc::compiler
