// The working form of a command list inside codegen: commands whose GEMM/ALU micro-op
// kernels are held inline (so passes can merge them) until finalize() interns them.
#pragma once

#include <string>
#include <vector>

#include "vacc/isa/command.h"
#include "vacc/isa/config.h"

namespace vacc::lower {

struct CodegenCommand {
  isa::Command cmd;     // GemmCommand / AluCommand `kernel` is unused until finalize()
  isa::UopKernel uops;  // GEMM/ALU only
};
using CodegenCommands = std::vector<CodegenCommand>;

// Interns every kernel of `ops` (deduplicated by content) into `list` and appends the commands.
void finalize(CodegenCommands ops, isa::CommandList *list);
// The stream as isa::to_text lists a command list (for dumps), its DMAs naming `buffers`.
std::string commands_text(const CodegenCommands &ops,
                          const std::vector<isa::CommandBuffer> &buffers);
// The command-list verifier (verify_commands.cc); `where` names the layer and the pass.
void verify_commands(const CodegenCommands &ops, const isa::HwConfig &config,
                     const std::string &where);

// Pass: merges consecutive GEMMs (ALUs) that differ only in their micro-ops into one command
// with a multi-micro-op kernel of at most `max_uops` micro-ops, where the merged command
// computes the same values (GEMM accumulation is order independent; an ALU merge must not
// let one micro-op read a tile another writes). With `by_bank`, only commands whose ACC ranges
// lie in the same bank of `config` merge. With extensions.alu_hold, an ALU in the held form
// (isa::alu_holds_operand) whose loops run at least kHeldAluIterations times stays alone: it
// issues every cycle, where merged it would issue every other cycle.
constexpr uint32_t kHeldAluIterations = 4;
CodegenCommands merge_kernels(const CodegenCommands &ops, uint32_t max_uops,
                              const isa::HwConfig &config, bool by_bank);

// Pass: merges consecutive non-reset GEMMs of one reduction (each overlapping the scratchpad
// ranges the run so far touches: a virtual thread's tiles, never another thread's), so that
// stagger_threads moves nothing into the middle of a reduction.
CodegenCommands merge_reductions(const CodegenCommands &ops, uint32_t max_uops);

// Pass (on a stream without tokens): staggers virtual threads. ALUs and LOAD ACC move up and
// GEMM resets down on the compute engine, loads up on the load engine, each past commands it
// does not conflict with, so one thread's requantization, stores and loads overlap another
// thread's GEMMs instead of running in lockstep (stagger_threads.cc).
CodegenCommands stagger_threads(const CodegenCommands &ops);

// The stream with the tokens its scratchpad conflicts require, derived from scratch (any it
// had are dropped; insert_tokens.cc): the stream order is the program's meaning.
CodegenCommands insert_tokens(const CodegenCommands &ops);

// Pass: sets the overlap flag on every GEMM/ALU that stays inside one ACC bank, so it waits
// only for the other compute unit's work on that bank (mark_overlap.cc, isa/README.md).
CodegenCommands mark_overlap(const CodegenCommands &ops, const isa::HwConfig &config);

// Pass (extensions.gemm_assign): drops each GEMM reset whose tiles the next command on them, a
// GEMM, writes exactly once each, and makes that GEMM an assign GEMM (its products replace the
// tiles); a first GEMM that writes a tile more than once keeps its reset (assign_first_gemms.cc).
CodegenCommands assign_first_gemms(const CodegenCommands &ops);

// Pass: turns each GEMM reset into the ALU multiply by 0 that writes the same zeros, so
// zeroing runs on the ALU beside the other thread's GEMMs (reset_on_alu.cc).
CodegenCommands reset_on_alu(const CodegenCommands &ops);
// Whether `op` is such an ALU reset (a multiply by the immediate 0): the passes after
// reset_on_alu recognize its resets by this, not by a copy of its encoding.
bool is_alu_reset(const CodegenCommand &op);

// Pass (on a stream without tokens, after reset_on_alu; 2 virtual threads with overlap): orders
// the compute engine's commands for its in-order dispatch, which holds every later command while
// one waits for its unit or a token: each GEMM moves down to just before its ACC bank's next
// GEMM, so a thread's GEMMs follow each other; each ALU reset that waits for a store down to
// just before the first command that conflicts with it, so that wait holds nothing else up;
// and the ALU work (with its stores) that the GEMM before it cannot cover (its own bank's, or
// more than that GEMM's cycles) moves below the next GEMM of another bank, so the GEMM core
// runs beside it (order_compute_dispatch.cc).
CodegenCommands order_compute_dispatch(const CodegenCommands &ops, const isa::HwConfig &config);

// Pass: splits the first GEMMs on each accumulator (a virtual thread's first reduction steps)
// into one GEMM per load they read from, so the GEMM core starts while the pipeline fills
// (split_first_gemms.cc).
CodegenCommands split_first_gemms(const CodegenCommands &ops);

// Whether a token relayed through the compute engine orders a load after a store (a buffer
// both loaded and stored); insert_tokens cannot express that, relax_tokens keeps it.
bool needs_relays(const CodegenCommands &ops);

// Pass: merges consecutive unpadded DMA commands of one buffer that continue each other in
// the scratchpad and in DRAM into one 2D transfer (rows first, then rows into a rectangle).
CodegenCommands coalesce_dma(const CodegenCommands &ops);

// Pass: moves each dependency push up to just after the last instruction of its engine that
// the waiting engine's guarded work conflicts with (overlapping scratchpad ranges, one side
// writing), and each pop down to just before the first instruction of its engine that
// conflicts with the work its token guards; token order per queue and load/store relays
// through the compute engine are kept.
CodegenCommands relax_tokens(const CodegenCommands &ops);

}  // namespace vacc::lower
