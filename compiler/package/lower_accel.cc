#include "vacc/package/lower_accel.h"

#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>

#include "vacc/codegen/accel/operators.h"
#include "vacc/isa/command.h"
#include "vacc/support/error.h"

namespace vacc::package {

namespace {

// Symmetric padding (top == bottom, left == right) of a convolution, from its pads attribute
// or, with auto_pad, from its shapes; nullopt when it is asymmetric.
std::optional<std::pair<int64_t, int64_t>> symmetric_pads(const graph::Node &node, int64_t h,
                                                          int64_t w, int64_t kh, int64_t kw,
                                                          int64_t oh, int64_t ow, int64_t sh,
                                                          int64_t sw) {
  const std::string auto_pad = node.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = node.attrs.get_ints("pads", {0, 0, 0, 0});
    if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3]) return std::nullopt;
    return std::make_pair(pads[0], pads[1]);
  }
  const int64_t th = std::max<int64_t>(0, (oh - 1) * sh + kh - h);
  const int64_t tw = std::max<int64_t>(0, (ow - 1) * sw + kw - w);
  if (th % 2 || tw % 2) return std::nullopt;
  return std::make_pair(th / 2, tw / 2);
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

// The add's constant identity-weight argument, [2, BO, BI] int8.
graph::Tensor add_weight_tensor(const isa::HwConfig &config, const codegen::accel::AddParams &p) {
  const std::vector<int64_t> w = codegen::accel::add_weight(config, p);
  graph::Tensor t(graph::DType::kInt8, {2, config.block_out, config.block_in});
  int8_t *pt = t.data<int8_t>();
  for (size_t i = 0; i < w.size(); ++i) pt[i] = static_cast<int8_t>(w[i]);
  return t;
}

// The requantization of a fused operator: one shift or one per output channel, and its clip
// bounds (codegen/accel checks what the ALU can express and says why when it cannot).
compiler::Requant requant_of(const graph::Node &node) {
  std::vector<int64_t> shifts = node.attrs.get_ints("shifts", {0});
  const int64_t lo = node.attrs.get_int("clip_min", -128), hi = node.attrs.get_int("clip_max", 127);
  compiler::Requant r;
  r.shift = static_cast<int>(shifts[0]);
  if (std::any_of(shifts.begin(), shifts.end(), [&](int64_t s) { return s != shifts[0]; }))
    r.channel_shifts = shifts;
  r.relu = lo == 0;
  r.clip_min = lo;
  r.clip_max = hi;
  return r;
}

// DIR/NNN_<name>, with the node's name made safe as one path component.
std::string layer_dir(const std::string &dir, size_t index, const std::string &name) {
  std::string safe;
  for (char c : name) safe += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '_';
  while (!safe.empty() && (safe[0] == '_' || safe[0] == '.')) safe.erase(0, 1);
  return fmt::format("{}/{:03}_{}", dir, index, safe);
}

uint32_t add_constant(isa::Package &p, const std::string &name, const graph::Tensor &t) {
  isa::PackageTensor pt;
  pt.name = name;
  pt.dtype = graph::dtype_name(t.dtype());
  pt.shape = t.shape();
  pt.blob = p.add_blob(std::vector<uint8_t>(t.raw(), t.raw() + t.nbytes()));
  p.tensors.push_back(std::move(pt));
  return static_cast<uint32_t>(p.tensors.size() - 1);
}

}  // namespace

LowerStats lower_accel_steps(const graph::Graph &graph, const isa::HwConfig &config,
                             isa::Package &package, const LowerOptions &options) {
  LowerStats stats;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<graph::Node *> nodes = graph.nodes();
  VACC_CHECK(nodes.size() == package.steps.size()) << "package does not match its graph";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const graph::Node &node = *nodes[i];
    isa::PackageStep &step = package.steps[i];
    if (step.target != isa::StepTarget::kAccel) continue;
    const auto layer_start = std::chrono::steady_clock::now();
    auto to_cpu = [&](const std::string &why) {
      step.target = isa::StepTarget::kCpu;
      step.note = "no accelerator kernel: " + why;
      ++stats.moved_to_cpu;
    };
    codegen::accel::LayerOptions lo;
    lo.vthreads = options.vthreads;
    if (!options.dump_dir.empty()) lo.pipeline.dump_dir = layer_dir(options.dump_dir, i, node.name);
    const graph::Value *x = node.inputs[0], *w = node.inputs[1], *y = node.outputs[0];
    std::optional<codegen::accel::CompiledLayer> layer;
    int64_t batch = 0, out_channels = 0;
    if (node.op == graph::OpKind::kQConv) {
      // data [N/B, C/BI, H, W, B, BI], weight [O/BO, C/BI, KH, KW, BO, BI],
      // out [N/B, O/BO, OH, OW, B, BO].
      VACC_CHECK(x->layout.blocked && x->rank() == 6 && w->rank() == 6 && y->rank() == 6)
          << "accelerator conv not in blocked layout: " << node.describe();
      compiler::Conv2dParams p;
      p.batch = batch = x->shape[0] * x->shape[4];
      p.in_channels = x->shape[1] * x->shape[5];
      p.height = x->shape[2];
      p.width = x->shape[3];
      p.out_channels = out_channels = w->shape[0] * w->shape[4];
      p.kernel_h = w->shape[2];
      p.kernel_w = w->shape[3];
      std::vector<int64_t> strides = node.attrs.get_ints("strides", {1, 1});
      p.stride_h = strides.at(0);
      p.stride_w = strides.at(1);
      auto pads = symmetric_pads(node, p.height, p.width, p.kernel_h, p.kernel_w, y->shape[2],
                                 y->shape[3], p.stride_h, p.stride_w);
      if (!pads) {
        to_cpu("asymmetric padding");
        continue;
      }
      p.pad_h = pads->first;
      p.pad_w = pads->second;
      p.requant = requant_of(node);
      try {
        layer = codegen::accel::compile_conv2d(config, p, lo, node.name);
      } catch (const Error &e) {
        to_cpu(e.what());
        continue;
      }
    } else if (node.op == graph::OpKind::kQDense) {
      // data [N/B, K/BI, B, BI], weight [M/BO, K/BI, BO, BI], out [N/B, M/BO, B, BO].
      VACC_CHECK(x->layout.blocked && x->rank() == 4 && w->rank() == 4 && y->rank() == 4)
          << "accelerator dense not in blocked layout: " << node.describe();
      compiler::DenseParams p;
      p.batch = batch = x->shape[0] * x->shape[2];
      p.in_features = x->shape[1] * x->shape[3];
      p.out_features = out_channels = w->shape[0] * w->shape[2];
      p.requant = requant_of(node);
      try {
        layer = codegen::accel::compile_dense(config, p, lo, node.name);
      } catch (const Error &e) {
        to_cpu(e.what());
        continue;
      }
    } else if (node.op == graph::OpKind::kQAdd) {
      // a, b, out [N/B, C/BC, H, W, B, BC].
      VACC_CHECK(x->layout.blocked && x->rank() == 6 && y->rank() == 6)
          << "accelerator add not in blocked layout: " << node.describe();
      codegen::accel::AddParams p;
      p.batch = x->shape[0] * x->shape[4];
      p.channels = x->shape[1] * x->shape[5];
      p.height = x->shape[2];
      p.width = x->shape[3];
      p.lshift_a = static_cast<int>(node.attrs.get_int("lshift_a", 0));
      p.lshift_b = static_cast<int>(node.attrs.get_int("lshift_b", 0));
      p.rshift = static_cast<int>(node.attrs.get_int("rshift", 0));
      p.clip_min = node.attrs.get_int("clip_min", -128);
      p.clip_max = node.attrs.get_int("clip_max", 127);
      try {
        layer = codegen::accel::compile_add(config, p, lo, node.name);
      } catch (const Error &e) {
        to_cpu(e.what());
        continue;
      }
      const uint32_t weight =
          add_constant(package, y->name + ".add_weight", add_weight_tensor(config, p));
      step.bindings = {step.inputs[0], step.inputs[1], static_cast<int32_t>(weight),
                       step.outputs[0]};
    } else {
      to_cpu(fmt::format("{} has no accelerator operator yet", graph::op_name(node.op)));
      continue;
    }

    if (node.op != graph::OpKind::kQAdd) {
      // Conv and dense: (data, weight, bias[, shifts], out).
      const uint32_t bias = add_constant(
          package, y->name + ".bias_nb",
          broadcast_channels(constant_values(node.input(2)), batch, out_channels, config));
      step.bindings = {step.inputs[0], step.inputs[1], static_cast<int32_t>(bias)};
      if (layer->commands.buffers.size() == 5) {
        const uint32_t shifts = add_constant(
            package, y->name + ".shifts_nb",
            broadcast_channels(node.attrs.get_ints("shifts", {0}), batch, out_channels, config));
        step.bindings.push_back(static_cast<int32_t>(shifts));
      }
      step.bindings.push_back(step.outputs[0]);
    }
    VACC_CHECK(layer->commands.buffers.size() == step.bindings.size())
        << node.describe() << ": the operator takes " << layer->commands.buffers.size()
        << " buffers, " << step.bindings.size() << " bound";
    for (size_t b = 0; b < step.bindings.size(); ++b) {
      const isa::PackageTensor &t = package.tensors[step.bindings[b]];
      const uint64_t elems = layer->commands.buffers[b].elements;
      const uint64_t want =
          static_cast<uint64_t>(t.bytes()) / config.tile_bytes(layer->commands.buffers[b].mem);
      VACC_CHECK(elems == want) << node.describe() << ": buffer '"
                                << layer->commands.buffers[b].name << "' has " << elems
                                << " elements, tensor '" << t.name << "' " << want;
    }
    step.commands = package.add_blob(isa::serialize(layer->commands));
    if (!options.dump_dir.empty())
      std::ofstream(lo.pipeline.dump_dir + "/commands.txt") << isa::to_text(layer->commands);
    ++stats.lowered;
    if (options.log) {
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - layer_start)
              .count();
      options.log(fmt::format(
          "{:<30} {:8.1f} ms  {} commands, tiles h{} w{} oc{} ic{}, {} vthreads", node.name, ms,
          layer->commands.commands.size(), layer->schedule.tile_h, layer->schedule.tile_w,
          layer->schedule.tile_oc, layer->schedule.tile_ic, layer->schedule.vthreads));
    }
  }
  stats.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace vacc::package
