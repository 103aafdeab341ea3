#include "vacc/codegen/accel/codegen.h"

#include <map>

#include "evaluate_loops.h"
#include "ops_list.h"
#include "vacc/support/error.h"

namespace vacc::codegen::accel {

void finalize(OpList ops, isa::CommandList *list) {
  std::map<std::vector<uint32_t>, uint32_t> index;
  auto intern = [&](const isa::UopKernel &k) {
    std::vector<uint32_t> key;
    key.reserve(3 * k.size());
    for (const isa::Uop &u : k) key.insert(key.end(), {u.dst, u.src, u.wgt});
    auto [it, added] = index.emplace(key, static_cast<uint32_t>(list->kernels.size()));
    if (added) list->kernels.push_back(k);
    return it->second;
  };
  list->commands.reserve(list->commands.size() + ops.size());
  for (Op &op : ops) {
    if (auto *g = std::get_if<isa::GemmCommand>(&op.cmd)) g->kernel = intern(op.uops);
    if (auto *a = std::get_if<isa::AluCommand>(&op.cmd)) a->kernel = intern(op.uops);
    list->commands.push_back(op.cmd);
  }
}

isa::CommandList generate_commands(const tir::Func &f, const isa::HwConfig &config,
                                   const CodegenOptions &options) {
  isa::CommandList list;
  list.name = f.name;
  list.config_name = config.name;
  list.isa_fingerprint = config.isa_fingerprint();
  OpList ops = evaluate_loops(f, config, &list.buffers);
  // Without load/store relays, the tokens are rebuilt from the scratchpad conflicts of the
  // final order; with them, the IR's tokens are kept and relaxed.
  const bool exact_tokens = options.relax_tokens && !needs_relays(ops);
  const uint32_t cap = std::max<uint32_t>(
      1,
      std::min<uint32_t>(options.max_kernel_uops, static_cast<uint32_t>(config.uop_depth() / 2)));
  if (exact_tokens) {
    ops = strip_tokens(ops);
    if (options.stagger_threads) {
      if (options.merge_kernels) ops = merge_reductions(ops, cap);
      ops = stagger_threads(ops);
    }
  }
  if (options.merge_kernels) ops = merge_kernels(ops, cap);
  if (options.coalesce_dma) ops = coalesce_dma(ops);
  if (exact_tokens && options.split_first_gemms) ops = split_first_gemms(ops);
  if (options.overlap && options.reset_on_alu) ops = reset_on_alu(ops);
  if (exact_tokens) {
    ops = insert_tokens(ops);
  } else if (options.relax_tokens) {
    ops = relax_tokens(ops);
  }
  if (options.overlap) ops = mark_overlap(ops, config);
  finalize(std::move(ops), &list);

  const uint64_t insns = list.count_dma() + list.count_gemm() + list.count_alu();
  if (insns > options.max_insns)
    fail(
        "{}: the program needs {} instructions, more than the limit of {}; use larger tiles "
        "(fewer, longer GEMMs) or split the operator",
        f.name, insns, options.max_insns);
  const uint64_t uops = list.total_kernel_uops();
  if (uops > options.max_uops)
    fail(
        "{}: the program needs {} distinct micro-ops, more than the micro-op pool's {}; use "
        "fewer virtual threads or tile shapes that repeat",
        f.name, uops, options.max_uops);
  for (const auto &k : list.kernels)
    if (k.size() > static_cast<size_t>(config.uop_depth()))
      fail(
          "{}: a micro-op kernel of {} micro-ops does not fit the UOP scratchpad ({} entries, "
          "buffers.uop_kib = {})",
          f.name, k.size(), config.uop_depth(), config.uop_kib);
  return list;
}

}  // namespace vacc::codegen::accel
