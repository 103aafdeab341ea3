#include "vacc/lower/lower_model.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>

#include "vacc/graph/conv_chain.h"
#include "vacc/isa/command.h"
#include "vacc/lower/legality.h"
#include "vacc/lower/lower.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace vacc::lower {
namespace {

// " +alu_clip", " +alu_shr_clip", " +alu_hold", " +gemm_assign" for each ISA extension the
// layer's commands use (the per-layer table's schedule column shows it), "" when none.
std::string extensions_used(const isa::HwConfig &config, const isa::CommandList &commands) {
  bool clip = false, shr_clip = false, hold = false, assign = false;
  for (const auto &cmd : commands.commands) {
    if (const auto *g = std::get_if<isa::GemmCommand>(&cmd)) assign |= g->assign;
    if (const auto *a = std::get_if<isa::AluCommand>(&cmd)) {
      clip |= a->op == isa::AluOp::kClip;
      shr_clip |= a->op == isa::AluOp::kShrClip;
      hold |=
          a->loop_out * a->loop_in > 1 &&
          isa::alu_holds_operand(config, a->use_imm,
                                 static_cast<uint32_t>(commands.kernels[a->kernel].size()), a->src);
    }
  }
  return std::string(clip ? " +alu_clip" : "") + (shr_clip ? " +alu_shr_clip" : "") +
         (hold ? " +alu_hold" : "") + (assign ? " +gemm_assign" : "");
}

// A per-channel vector (bias, shifts) as the operators read it: [N/B, O/BO, B, BO] int32, the
// same O values for every batch row, zero past the end of `values`.
graph::Tensor broadcast_channels(const std::vector<int64_t> &values, int64_t n, int64_t o,
                                 const isa::HwConfig &config) {
  const int64_t B = config.batch, BO = config.block_out;
  graph::Tensor out(graph::DType::kInt32, {n / B, o / BO, B, BO});
  int32_t *po = out.data<int32_t>();
  for (int64_t nb = 0; nb < n / B; ++nb)
    for (int64_t ob = 0; ob < o / BO; ++ob)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t bo = 0; bo < BO; ++bo) {
          const size_t c = static_cast<size_t>(ob * BO + bo);
          *po++ = c < values.size() ? static_cast<int32_t>(values[c]) : 0;
        }
  return out;
}

std::vector<int64_t> constant_values(const graph::Value *v) {
  std::vector<int64_t> out;
  if (v && v->constant)
    for (int64_t i = 0; i < v->constant->size(); ++i) out.push_back(v->constant->as_int(i));
  return out;
}

// An int8 constant of `shape` holding `values` (the operators' weight arguments).
graph::Tensor int8_tensor(graph::Shape shape, const std::vector<int64_t> &values) {
  graph::Tensor t(graph::DType::kInt8, std::move(shape));
  int8_t *pt = t.data<int8_t>();
  for (size_t i = 0; i < values.size(); ++i) pt[i] = static_cast<int8_t>(values[i]);
  return t;
}

int32_t add_constant(isa::Package &p, const std::string &name, const graph::Tensor &t) {
  isa::PackageTensor pt;
  pt.name = name;
  pt.dtype = graph::dtype_name(t.dtype());
  pt.shape = t.shape();
  pt.blob = p.add_blob(std::vector<uint8_t>(t.raw(), t.raw() + t.nbytes()));
  p.tensors.push_back(std::move(pt));
  return static_cast<int32_t>(p.tensors.size() - 1);
}

// The step's DRAM buffers, in the operator's argument order; new constants go to `package`.
std::vector<int32_t> bindings(const graph::Node &node, const Layer &layer,
                              const isa::HwConfig &config, const isa::PackageStep &step,
                              isa::Package &package) {
  const std::string &out = node.outputs[0]->name;
  if (const auto *pool = std::get_if<PoolParams>(&layer.params)) {
    std::vector<int32_t> b = {
        step.inputs[0],
        add_constant(package, out + ".pool_weight",
                     int8_tensor({1, config.block_out, config.block_in}, pool_weight(config)))};
    if (pool_counts_vary(*pool)) {
      const std::vector<int64_t> m = pool_multipliers(config, *pool);
      graph::Tensor t(graph::DType::kInt32,
                      {pool->out_height, pool->out_width, config.batch, config.block_out});
      for (size_t i = 0; i < m.size(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(m[i]);
      b.push_back(add_constant(package, out + ".pool_multipliers", t));
    }
    b.push_back(step.outputs[0]);
    return b;
  }
  if (const auto *add = std::get_if<AddParams>(&layer.params)) {
    const int32_t weight =
        add_constant(package, out + ".add_weight",
                     int8_tensor({2, config.block_out, config.block_in}, add_weight(config, *add)));
    return {step.inputs[0], step.inputs[1], weight, step.outputs[0]};
  }
  // Conv and dense: (data, weight, bias[, shifts][, multipliers][, skip, skip_weight], out);
  // a conv chain: (data, weight, bias[, ...] of the first, weight, bias[, ...] of the second,
  // out).
  std::vector<int32_t> b = {step.inputs[0], step.inputs[1]};
  // A GEMM node's per-channel vectors (bias, then shifts and multipliers where it has them)
  // as its operator reads them.
  auto vectors = [&](const graph::Node &part, const Requant &requant, int64_t batch,
                     int64_t channels) {
    const std::string &name = part.outputs[0]->name;
    b.push_back(
        add_constant(package, name + ".bias_nb",
                     broadcast_channels(constant_values(part.input(2)), batch, channels, config)));
    if (requant.per_channel())
      b.push_back(add_constant(
          package, name + ".shifts_nb",
          broadcast_channels(part.attrs.get_ints("shifts", {0}), batch, channels, config)));
    if (requant.multiplied())
      b.push_back(add_constant(package, name + ".multipliers_nb",
                               broadcast_channels(requant.multipliers, batch, channels, config)));
  };
  if (const auto *chain = std::get_if<ConvChainParams>(&layer.params)) {
    const std::unique_ptr<graph::ConvChainParts> parts = graph::conv_chain_parts(node);
    vectors(parts->first, chain->first.requant, chain->first.batch, chain->first.out_channels);
    b.push_back(step.inputs[3]);
    vectors(parts->second, chain->second.requant, chain->second.batch, chain->second.out_channels);
    if (chain->second.residual) {
      b.push_back(step.inputs[5]);
      b.push_back(add_constant(package, out + ".skip_weight",
                               int8_tensor({1, config.block_out, config.block_in},
                                           residual_weight(config, *chain->second.residual))));
    }
    b.push_back(step.outputs[0]);
    return b;
  }
  const auto *conv = std::get_if<Conv2dParams>(&layer.params);
  if (conv) {
    vectors(node, conv->requant, conv->batch, conv->out_channels);
  } else {
    const auto &dense = std::get<DenseParams>(layer.params);
    // One row of vectors per group, read by all its rows.
    vectors(node, dense.requant, config.batch * dense.groups, dense.out_features);
  }
  if (conv && conv->residual) {
    b.push_back(step.inputs[3]);
    b.push_back(add_constant(package, out + ".skip_weight",
                             int8_tensor({1, config.block_out, config.block_in},
                                         residual_weight(config, *conv->residual))));
  }
  b.push_back(step.outputs[0]);
  return b;
}

}  // namespace

int lower_model(const graph::Graph &graph, const isa::HwConfig &config, isa::Package &package,
                const ModelLowerOptions &options) {
  int lowered_steps = 0;
  const std::vector<graph::Node *> nodes = graph.nodes();
  VACC_CHECK(nodes.size() == package.steps.size()) << "package does not match its graph";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const graph::Node &node = *nodes[i];
    isa::PackageStep &step = package.steps[i];
    if (step.target != isa::StepTarget::kAccel) continue;
    const auto start = std::chrono::steady_clock::now();
    std::string why;
    const std::optional<Layer> layer = layer_of(node, config, &why);
    VACC_CHECK(layer) << node.describe() << " was partitioned to the accelerator: " << why;
    if (options.on_layer) options.on_layer(i, *layer);
    LowerOptions lo;
    lo.vthreads = options.vthreads;
    lo.verify = options.verify;
    if (!options.dump_dir.empty()) lo.dump_dir = options.dump_dir + "/" + dump_name(i, node.name);
    std::optional<LoweredLayer> tuned;
    if (const std::optional<TunedSchedule> t = options.tuned ? options.tuned(*layer) : std::nullopt) {
      // A tuned schedule from another compiler version or a hand-edited log may break a rule
      // or fail to lower: the layer then takes its default schedule, and the log says why.
      std::string why = check_schedule(config, *layer, t->schedule).value_or("");
      if (why.empty()) {
        try {
          LowerOptions tlo = lo;
          tlo.schedule = t->schedule;
          tuned = lower(config, *layer, tlo);
          step.schedule = fmt::format("tuned: {}{} ({})", describe(t->schedule),
                                      extensions_used(config, tuned->commands), t->source);
        } catch (const Error &e) {
          why = e.what();
        }
      }
      if (!why.empty() && options.log)
        options.log(fmt::format("{}: the tuned schedule {} from {} is not used: {}", node.name,
                                describe(t->schedule), t->source, why));
    }
    const LoweredLayer lowered = tuned ? std::move(*tuned) : lower(config, *layer, lo);
    if (!tuned)
      step.schedule =
          "heuristic: " + describe(lowered.schedule) + extensions_used(config, lowered.commands);

    step.bindings = bindings(node, *layer, config, step, package);
    VACC_CHECK(lowered.commands.buffers.size() == step.bindings.size())
        << node.describe() << ": the operator takes " << lowered.commands.buffers.size()
        << " buffers, " << step.bindings.size() << " bound";
    for (size_t b = 0; b < step.bindings.size(); ++b) {
      const isa::PackageTensor &t = package.tensors[step.bindings[b]];
      const uint64_t elems = lowered.commands.buffers[b].elements;
      const uint64_t want =
          static_cast<uint64_t>(t.bytes()) / config.tile_bytes(lowered.commands.buffers[b].mem);
      VACC_CHECK(elems == want) << node.describe() << ": buffer '"
                                << lowered.commands.buffers[b].name << "' has " << elems
                                << " elements, tensor '" << t.name << "' " << want;
    }
    step.commands = package.add_blob(isa::serialize(lowered.commands));
    if (!options.dump_dir.empty())
      std::ofstream(lo.dump_dir + "/commands.txt") << isa::to_text(lowered.commands);
    ++lowered_steps;
    if (options.log) {
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      const AccelSchedule &s = lowered.schedule;
      options.log(
          fmt::format("{:<30} {:8.1f} ms  {} commands, tiles h{} w{} oc{} ic{}, {} vthreads{}",
                      node.name, ms, lowered.commands.commands.size(), s.tile_h, s.tile_w,
                      s.tile_oc, s.tile_ic, s.vthreads, s.vthread_rows ? " over the rows" : ""));
    }
  }
  return lowered_steps;
}

}  // namespace vacc::lower
