// The accelerator lowering of one layer, top to bottom: legality, schedule, compute definition,
// loop-IR passes, flatten, command-list passes, finalize (lower.h). Every pass runs through
// one PassRunner, which names, times, verifies and dumps it.
#include "vacc/lower/lower.h"

#include <algorithm>
#include <variant>

#include "commands/codegen_commands.h"
#include "commands/emit_commands.h"
#include "pass_runner.h"
#include "vacc/lower/loops/check_accelerator_only.h"
#include "vacc/lower/loops/fold_uop_loops.h"
#include "vacc/lower/loops/inject_virtual_threads.h"
#include "vacc/lower/loops/insert_dependencies.h"
#include "vacc/lower/loops/lower_dma_copies.h"
#include "vacc/lower/loops/plan_scratchpads.h"
#include "vacc/lower/loops/tensorize.h"
#include "vacc/support/error.h"
#include "vacc/tir/arith.h"
#include "vacc/tir/functor.h"

namespace vacc::lower {
namespace {

// Whether a DMA loads from and another stores to one DRAM buffer: then a load may have to wait
// for a store (or the reverse), a token relayed through the compute engine, which only the
// loop IR's tokens express.
bool loads_and_stores_one_buffer(const tir::Func &f) {
  std::vector<const tir::BufferNode *> loaded, stored;
  tir::for_each_stmt(f.body, [&](const tir::Stmt &s) {
    if (const auto *d = s.as<tir::Dma>())
      (d->dir == tir::DmaDir::kLoad ? loaded : stored).push_back(d->dram.get());
  });
  for (const tir::BufferNode *b : stored)
    if (std::find(loaded.begin(), loaded.end(), b) != loaded.end()) return true;
  return false;
}

tir::Func loop_passes(PassRunner &run, const tir::Func &input, const isa::HwConfig &config) {
  using tir::Func;
  run.input(input);
  Func f = run.run<Func>(
      "simplify", [](const Func &g) { return tir::simplify(g); }, input);
  f = run.run<Func>(
      "lower_dma_copies", [&](const Func &g) { return tir::lower_dma_copies(g, config); }, f);
  f = run.run<Func>(
      "tensorize", [&](const Func &g) { return tir::tensorize(g, config); }, f);
  f = run.run<Func>("inject_virtual_threads", tir::inject_virtual_threads, f);
  f = run.run<Func>(
      "plan_scratchpads", [&](const Func &g) { return tir::plan_scratchpads(g, config); }, f);
  f = run.run<Func>("fold_uop_loops", tir::fold_uop_loops, f);
  if (loads_and_stores_one_buffer(f))
    f = run.run<Func>("insert_dependencies", tir::insert_dependencies, f);
  return run.run<Func>("check_accelerator_only", tir::check_accelerator_only, f);
}

isa::CommandList command_passes(PassRunner &run, const tir::Func &f, const isa::HwConfig &config,
                                const CommandOptions &o) {
  isa::CommandList list;
  list.name = f.name;
  list.config_name = config.name;
  list.isa_fingerprint = config.isa_fingerprint();
  // Flatten: the host loops run, one command per intrinsic statement instance.
  run.name_buffers(&list.buffers);
  CodegenCommands ops = run.run<CodegenCommands>(
      "flatten", [&](const tir::Func &g) { return emit_commands(g, config, &list.buffers); }, f);
  // With tokens from the loop IR (load/store relays) the stream keeps them, relaxed; without,
  // it is reordered freely and its tokens derived from the final order.
  const bool relays = needs_relays(ops);
  const uint32_t cap = std::max<uint32_t>(
      1, std::min<uint32_t>(o.max_kernel_uops, static_cast<uint32_t>(config.uop_depth() / 2)));
  auto pass = [&](const char *name, bool enabled, auto &&fn) {
    if (enabled) ops = run.run<CodegenCommands>(name, fn, ops);
  };
  pass("merge_reductions", !relays && o.stagger_threads && o.merge_kernels,
       [&](const CodegenCommands &x) { return merge_reductions(x, cap); });
  pass("stagger_threads", !relays && o.stagger_threads, stagger_threads);
  // With overlap between two threads, a merged kernel stays in one ACC bank (one thread's):
  // one spanning both could not carry the overlap flag and would wait for, and hold up, both
  // threads' work. (One thread's tile may span both banks, and its stores read both: merged,
  // the unflagged command's token vouches for both.)
  pass("merge_kernels", o.merge_kernels, [&](const CodegenCommands &x) {
    return merge_kernels(x, cap, config, o.overlap && o.stagger_threads);
  });
  pass("coalesce_dma", o.coalesce_dma, coalesce_dma);
  pass("split_first_gemms", !relays && o.split_first_gemms, split_first_gemms);
  pass("assign_first_gemms", config.gemm_assign && o.assign_first_gemms, assign_first_gemms);
  pass("reset_on_alu", o.overlap && o.reset_on_alu, reset_on_alu);
  pass("order_compute_dispatch", !relays && o.stagger_threads && o.overlap && o.order_dispatch,
       [&](const CodegenCommands &x) { return order_compute_dispatch(x, config); });
  if (relays)
    pass("relax_tokens", true, relax_tokens);
  else
    pass("insert_tokens", true, insert_tokens);
  pass("mark_overlap", o.overlap,
       [&](const CodegenCommands &x) { return mark_overlap(x, config); });

  // Finalize: kernels interned (deduplicated by content), the program against the limits.
  finalize(std::move(ops), &list);
  const uint64_t insns = list.count_dma() + list.count_gemm() + list.count_alu();
  if (insns > o.max_insns)
    fail(
        "{}: the program needs {} instructions, more than the limit of {}; use larger tiles "
        "(fewer, longer GEMMs) or split the operator",
        f.name, insns, o.max_insns);
  const uint64_t uops = list.total_kernel_uops();
  if (uops > o.max_uops)
    fail(
        "{}: the program needs {} distinct micro-ops, more than the micro-op pool's {}; use "
        "fewer virtual threads or tile shapes that repeat",
        f.name, uops, o.max_uops);
  for (const auto &k : list.kernels)
    if (k.size() > static_cast<size_t>(config.uop_depth()))
      fail(
          "{}: a micro-op kernel of {} micro-ops does not fit the UOP scratchpad ({} entries, "
          "buffers.uop_kib = {})",
          f.name, k.size(), config.uop_depth(), config.uop_kib);
  return list;
}

}  // namespace

LoweredLayer lower(const isa::HwConfig &config, const Layer &layer, const LowerOptions &options) {
  LoweredLayer out;
  out.name = layer.name;
  std::visit(
      [&](const auto &p) {
        // Legality: what the accelerator supports, named by the layer's parameter at fault.
        check_supported(config, p, layer.name);
        // Schedule: the tiling, derived from the config's scratchpads unless given.
        out.schedule = options.schedule ? *options.schedule
                                        : default_schedule(config, p, options.vthreads, layer.name);
        // Compute definition: the operator's tensors with the schedule applied, as loop IR.
        out.op = define(config, p, out.schedule, layer.name);
      },
      layer.params);
  PassRunner run(layer.name, config, options, &out.passes);
  // Loop-IR passes: DMA, tensor intrinsics, virtual threads, scratchpads.
  out.final_ir = loop_passes(run, out.op.func, config);
  // Flatten, command-list passes, finalize. Staggering pays only between virtual threads
  // (with one it measured slightly slower).
  CommandOptions co = options.commands;
  if (out.schedule.vthreads < 2) co.stagger_threads = false;
  out.commands = command_passes(run, out.final_ir, config, co);
  out.traffic = traffic_of(out.commands, config);
  return out;
}

tir::Func lower_loops(const tir::Func &f, const isa::HwConfig &config, const LowerOptions &options,
                      std::vector<PassRecord> *records) {
  PassRunner run(f.name, config, options, records);
  return loop_passes(run, f, config);
}

isa::CommandList generate_commands(const tir::Func &f, const isa::HwConfig &config,
                                   const LowerOptions &options, std::vector<PassRecord> *records) {
  PassRunner run(f.name, config, options, records);
  return command_passes(run, f, config, options.commands);
}

Traffic traffic_of(const isa::CommandList &list, const isa::HwConfig &config) {
  Traffic t;
  for (const auto &c : list.commands) {
    if (const auto *d = std::get_if<isa::DmaCommand>(&c)) {
      const uint64_t bytes = uint64_t{d->y} * d->x * config.tile_bytes(d->mem);
      if (!d->to_inp()) (d->store ? t.store_bytes : t.load_bytes) += bytes;  // on chip: no DRAM
      t.insn_bytes += isa::kInsnBytes;
    } else if (!std::holds_alternative<isa::DepCommand>(c)) {
      t.insn_bytes += isa::kInsnBytes;
    }
  }
  t.uop_bytes = list.total_kernel_uops() * config.uop_bytes();
  return t;
}

}  // namespace vacc::lower
