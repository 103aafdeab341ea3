#include "vacc/codegen/accel/operators.h"

#include "vacc/isa/insn.h"
#include "vacc/support/error.h"

namespace vacc::codegen::accel {
namespace {

CompiledLayer finish(const isa::HwConfig &config, compiler::Operator op,
                     const compiler::AccelSchedule &schedule, const LayerOptions &options,
                     const std::string &name) {
  CompiledLayer layer;
  layer.name = name;
  layer.schedule = schedule;
  layer.op = std::move(op);
  layer.final_ir = compiler::run_pipeline(layer.op.func, config, options.pipeline);
  CodegenOptions codegen = options.codegen;
  // Staggering pays only between virtual threads (with one it measured slightly slower).
  if (schedule.vthreads < 2) codegen.stagger_threads = false;
  layer.commands = generate_commands(layer.final_ir, config, codegen);
  layer.traffic = traffic_of(layer.commands, config);
  return layer;
}

}  // namespace

Traffic traffic_of(const isa::CommandList &list, const isa::HwConfig &config) {
  Traffic t;
  for (const auto &c : list.commands) {
    if (const auto *d = std::get_if<isa::DmaCommand>(&c)) {
      const uint64_t bytes = uint64_t{d->y} * d->x * config.tile_bytes(d->mem);
      (d->store ? t.store_bytes : t.load_bytes) += bytes;
      t.insn_bytes += isa::kInsnBytes;
    } else if (!std::holds_alternative<isa::DepCommand>(c)) {
      t.insn_bytes += isa::kInsnBytes;
    }
  }
  t.uop_bytes = list.total_kernel_uops() * config.uop_bytes();
  return t;
}

CompiledLayer compile_conv2d(const isa::HwConfig &config, const compiler::Conv2dParams &p,
                             const LayerOptions &options, const std::string &name) {
  check_conv2d_supported(config, p, name);
  compiler::AccelSchedule s =
      options.schedule ? *options.schedule
                       : default_conv2d_schedule(config, p, options.vthreads, name);
  return finish(config, compiler::conv2d_accel(config, p, s, name), s, options, name);
}

CompiledLayer compile_dense(const isa::HwConfig &config, const compiler::DenseParams &p,
                            const LayerOptions &options, const std::string &name) {
  compiler::AccelSchedule s = options.schedule
                                  ? *options.schedule
                                  : default_dense_schedule(config, p, options.vthreads, name);
  return finish(config, compiler::dense_accel(config, p, s, name), s, options, name);
}

}  // namespace vacc::codegen::accel
