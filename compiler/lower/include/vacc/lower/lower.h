// Lowering of one accelerator layer to a command list, the whole path in one place (lower.cc):
//
//   legality          check_supported: the layer's parameters against the accelerator
//   schedule          default_schedule: a tiling that fits the config's scratchpads
//   compute def.      define: the operator's tensors, the schedule applied, loop IR
//   loop-IR passes    simplify, DMA copies, tensorize, virtual threads, scratchpads, ...
//   flatten           the host loops run: one command per intrinsic instance
//   command passes    merge kernels, stagger threads, coalesce DMA, tokens, overlap, ...
//   finalize          kernels interned, the program checked against the runtime's limits
//
// One pass runner (pass_runner.h) runs both IR forms: every pass is logged and timed by name,
// the IR is verified after it (when asked) and can be dumped (NN_<pass>.tir for the loop IR,
// NN_<pass>.cmd for command lists). Dependency tokens are derived once: on the command list
// from the scratchpad conflicts of its final order (insert_tokens), or, for a program that
// both loads and stores one DRAM buffer (a token relayed through the compute engine), on the
// loop IR (insert_dependencies) and then relaxed on the command list.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vacc/isa/command.h"
#include "vacc/isa/config.h"
#include "vacc/lower/operators.h"
#include "vacc/support/pass_record.h"
#include "vacc/tir/func.h"

namespace vacc::lower {

// What the command-list passes may do, and the limits of the program.
struct CommandOptions {
  // Largest program the caller will run (the runtime's instruction reservation); counted
  // as DMA + GEMM + ALU commands (the queue adds micro-op loads and a few no-ops).
  uint64_t max_insns = uint64_t{1} << 22;
  // Largest number of distinct micro-ops the program may keep in its device-memory pool.
  uint64_t max_uops = uint64_t{1} << 16;
  // Largest micro-op kernel merged from consecutive GEMMs/ALUs (capped at half the UOP
  // scratchpad, so two kernels stay resident).
  uint32_t max_kernel_uops = 1024;
  bool stagger_threads = true;  // with 2 virtual threads only (1: measured slower)
  bool merge_kernels = true;
  bool coalesce_dma = true;
  bool overlap = true;            // GEMM/ALU overlap flags where the ACC banks allow
  bool split_first_gemms = true;  // each thread's first GEMMs split by their loads
  bool assign_first_gemms = true;  // with extensions.gemm_assign: no resets, assign GEMMs
  bool reset_on_alu = true;       // with overlap: accumulators zeroed by the ALU
  // With 2 threads and overlap: the compute engine's stream ordered so that its in-order
  // dispatch keeps the GEMM core fed (order_compute_dispatch.cc).
  bool order_dispatch = true;
};

struct LowerOptions {
  int vthreads = 2;                       // 1 or 2; a layer too small to split runs on 1
  std::optional<AccelSchedule> schedule;  // overrides the default schedule
  CommandOptions commands;
  // Verify the IR after every pass (tir::verify for loop IR; token balance, kernels and
  // scratchpad ranges for command lists). On by default; benchmarks that lower many layers
  // turn it off.
  bool verify = true;
  std::string dump_dir;  // "" = $VACC_DUMP_IR if set, else no dump
  // Called with each loop-IR pass's name and output (tests run the interpreter on each).
  std::function<void(const std::string &, const tir::Func &)> after_loop_pass;
};

// DRAM bytes one run of a command list moves, per direction, from its DMA commands.
struct Traffic {
  uint64_t load_bytes = 0;   // inp + wgt + acc loads (padding is not read)
  uint64_t store_bytes = 0;  // out
  uint64_t insn_bytes = 0;   // instruction stream, 16 bytes per DMA/GEMM/ALU command
  uint64_t uop_bytes = 0;    // micro-op kernels, each loaded at least once
  uint64_t data_bytes() const { return load_bytes + store_bytes; }
};
Traffic traffic_of(const isa::CommandList &list, const isa::HwConfig &config);

struct LoweredLayer {
  std::string name;
  AccelSchedule schedule;
  Operator op;         // the scheduled operator (its args are the command list's buffers)
  tir::Func final_ir;  // after the loop-IR passes: what the interpreter checks
  isa::CommandList commands;
  Traffic traffic;
  std::vector<PassRecord> passes;  // every pass of both IR forms, in order, with its time
};

// The whole path for one layer. Throws vacc::Error naming the layer when the accelerator
// does not support it, no tile fits, a field does not fit its ISA width, or the program is
// beyond the limits of options.commands.
LoweredLayer lower(const isa::HwConfig &config, const Layer &layer,
                   const LowerOptions &options = {});

// The two halves of lower() after the compute definition, for loop IR that was scheduled by
// hand: the loop-IR passes (their names: loop_passes()), and flatten + command-list passes +
// finalize. `f`'s buffers are the command list's, in order.
std::vector<std::string> loop_passes();
tir::Func lower_loops(const tir::Func &f, const isa::HwConfig &config,
                      const LowerOptions &options = {}, std::vector<PassRecord> *records = nullptr);
isa::CommandList generate_commands(const tir::Func &f, const isa::HwConfig &config,
                                   const LowerOptions &options = {},
                                   std::vector<PassRecord> *records = nullptr);

// Shorthands for lower() of one operator.
inline LoweredLayer compile_conv2d(const isa::HwConfig &config, const Conv2dParams &p,
                                   const LowerOptions &options = {},
                                   const std::string &name = "conv2d") {
  return lower(config, Layer{name, p}, options);
}
inline LoweredLayer compile_dense(const isa::HwConfig &config, const DenseParams &p,
                                  const LowerOptions &options = {},
                                  const std::string &name = "dense") {
  return lower(config, Layer{name, p}, options);
}
inline LoweredLayer compile_add(const isa::HwConfig &config, const AddParams &p,
                                const LowerOptions &options = {}, const std::string &name = "add") {
  return lower(config, Layer{name, p}, options);
}

}  // namespace vacc::lower
