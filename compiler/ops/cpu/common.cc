#include "common.h"

#include <limits>
#include <optional>

#include "vacc/codegen/cpu/jit.h"
#include "vacc/ops/cpu/ops.h"
#include "vacc/schedule/to_loop_ir.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {

DataType tir_type(graph::DType t) {
  switch (t) {
    case graph::DType::kFloat32:
      return tir::float32();
    case graph::DType::kFloat64:
      return DataType::float_(64);
    case graph::DType::kInt8:
      return tir::int8();
    case graph::DType::kUInt8:
      return tir::uint8();
    case graph::DType::kInt16:
      return DataType::int_(16);
    case graph::DType::kInt32:
      return tir::int32();
    case graph::DType::kInt64:
      return tir::int64();
    case graph::DType::kBool:
      return DataType::bool_();
  }
  return tir::float32();
}

std::string a_type(DataType t) {
  return (t.is_int() ? "an " : "a ") + t.str();
}

Expr fconst(DataType t, double v) {
  return tir::FloatImm::make(t, v);
}
Expr iconst(DataType t, int64_t v) {
  return tir::make_const(t, v);
}

Expr lowest(DataType t) {
  if (t.is_float()) return fconst(t, -std::numeric_limits<double>::infinity());
  if (t.is_uint() || t.is_bool()) return iconst(t, 0);
  return iconst(t, t.bits >= 64 ? INT64_MIN : -(int64_t{1} << (t.bits - 1)));
}
Expr highest(DataType t) {
  if (t.is_float()) return fconst(t, std::numeric_limits<double>::infinity());
  if (t.is_bool()) return iconst(t, 1);
  if (t.is_uint()) return iconst(t, t.bits >= 64 ? -1 : (int64_t{1} << t.bits) - 1);
  return iconst(t, t.bits >= 64 ? INT64_MAX : (int64_t{1} << (t.bits - 1)) - 1);
}

const graph::Value &KernelBuilder::in_value(size_t i) const {
  const graph::Value *v = node_.input(i);
  VACC_CHECK(v) << "input " << i << " of " << node_.describe() << " is absent";
  return *v;
}

Tensor KernelBuilder::input(size_t i, Shape shape) {
  for (auto &[k, t] : inputs_) {
    if (k == i) return t;
  }
  const graph::Value &v = in_value(i);
  if (shape.empty()) shape = v.shape;
  if (shape.empty()) shape = {1};  // scalars are one-element buffers
  VACC_CHECK(graph::num_elements(shape) == graph::num_elements(v.shape))
      << "input view changes the element count";
  Tensor t = te::placeholder("in" + std::to_string(i), shape, tir_type(v.dtype));
  inputs_.emplace_back(i, t);
  return t;
}

const graph::Tensor &KernelBuilder::constant(size_t i, const char *role) const {
  const graph::Value &v = in_value(i);
  if (!v.is_constant()) {
    unsupported(std::string("a computed ") + role + " input (it must be a constant)");
  }
  return *v.constant;
}

void KernelBuilder::unsupported(const std::string &why) const {
  fail("{}: the CPU backend does not support {} with {}", node_.describe(),
       graph::op_name(node_.op), why);
}

Tensor KernelBuilder::constant_param(const std::string &name, graph::Tensor value) {
  Shape shape = value.shape().empty() ? Shape{1} : value.shape();
  Tensor t = te::placeholder(name, shape, tir_type(value.dtype()));
  constant_tensors_.push_back(t);
  constants_.push_back(std::move(value));
  return t;
}

CpuKernel KernelBuilder::finish(const schedule::Schedule &s, const Tensor &out) {
  return finish(s, std::vector<Tensor>{out});
}

CpuKernel KernelBuilder::finish_elementwise(const Tensor &out) {
  schedule::Schedule s({out});
  schedule_elementwise(s, out);
  return finish(s, out);
}

CpuKernel KernelBuilder::finish(const schedule::Schedule &s, const std::vector<Tensor> &outs) {
  std::sort(inputs_.begin(), inputs_.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  // Inputs the schedule does not read (e.g. weights replaced by packed constants) stay
  // parameters but are not lowered.
  std::vector<Tensor> args;
  std::vector<std::pair<size_t, Tensor>> used;
  for (auto &[k, t] : inputs_) {
    if (s.stage_of(t->buffer.get())) used.emplace_back(k, t);
  }
  inputs_ = used;
  for (auto &[k, t] : inputs_) args.push_back(t);
  for (const Tensor &t : constant_tensors_) args.push_back(t);
  for (const Tensor &t : outs) args.push_back(t);
  CpuKernel k;
  k.func = schedule::to_loop_ir(s, std::string(graph::op_name(node_.op)), args);
  // Every present input is a parameter, even one the kernel does not read.
  std::vector<tir::Buffer> params;
  for (size_t i = 0; i < node_.inputs.size(); ++i) {
    if (!node_.inputs[i]) continue;
    tir::Buffer b;
    for (auto &[j, t] : inputs_) {
      if (j == i) b = t->buffer;
    }
    if (!b) b = tir::make_buffer("unused" + std::to_string(i), tir::int8(), {1});
    params.push_back(b);
  }
  for (const Tensor &t : constant_tensors_) params.push_back(t->buffer);
  for (const Tensor &t : outs) params.push_back(t->buffer);
  k.func.params = params;
  k.constants = std::move(constants_);
  return k;
}

Tensor unblock(const Tensor &blocked) {
  const Shape &b = blocked->shape();
  size_t r = b.size();
  int bn = static_cast<int>(b[r - 2]), bc = static_cast<int>(b[r - 1]);
  Shape plain = {b[0] * bn, b[1] * bc};
  plain.insert(plain.end(), b.begin() + 2, b.end() - 2);
  return te::compute(blocked->name + "_plain", plain, [&](const std::vector<tir::Var> &i) {
    std::vector<Expr> idx = {Expr(i[0]) / bn, Expr(i[1]) / bc};
    for (size_t d = 2; d < i.size(); ++d) idx.push_back(i[d]);
    idx.push_back(Expr(i[0]) % bn);
    idx.push_back(Expr(i[1]) % bc);
    return (*blocked)(idx);
  });
}

Tensor block(const Tensor &plain, int64_t bn, int64_t bc) {
  const Shape &p = plain->shape();
  VACC_CHECK(p[0] % bn == 0 && p[1] % bc == 0) << "block: extents are not multiples of blocks";
  Shape b = {p[0] / bn, p[1] / bc};
  b.insert(b.end(), p.begin() + 2, p.end());
  b.push_back(bn);
  b.push_back(bc);
  size_t r = b.size();
  return te::compute("y_blocked", b, [&](const std::vector<tir::Var> &i) {
    std::vector<Expr> idx = {Expr(i[0]) * static_cast<int>(bn) + i[r - 2],
                             Expr(i[1]) * static_cast<int>(bc) + i[r - 1]};
    for (size_t d = 2; d + 2 < r; ++d) idx.push_back(i[d]);
    return (*plain)(idx);
  });
}

Expr broadcast_read(const Tensor &t, const std::vector<tir::Var> &axes) {
  const Shape &shape = t->shape();
  size_t lead = axes.size() - shape.size();
  std::vector<Expr> idx;
  for (size_t k = 0; k < shape.size(); ++k) {
    idx.push_back(shape[k] == 1 ? Expr(0) : Expr(axes[lead + k]));
  }
  return (*t)(idx);
}

tir::Stmt loop_nest(const std::vector<int64_t> &extents, const std::string &prefix, bool parallel,
                    const std::function<tir::Stmt(const std::vector<Expr> &)> &body) {
  std::vector<tir::Var> vars;
  std::vector<Expr> exprs;
  for (size_t k = 0; k < extents.size(); ++k) {
    vars.push_back(tir::make_var(prefix + std::to_string(k)));
    exprs.push_back(vars.back());
  }
  tir::Stmt s = body(exprs);
  for (size_t k = extents.size(); k-- > 0;) {
    const bool par = parallel && k == 0 && extents[k] > 1;
    s = tir::For::make(vars[k], extents[k], par ? tir::ForKind::kParallel : tir::ForKind::kSerial,
                       s);
  }
  return s;
}

tir::Func direct_func(const Node &node, const std::vector<std::pair<size_t, tir::Buffer>> &inputs,
                      const std::vector<tir::Buffer> &outputs, tir::Stmt body) {
  std::vector<tir::Buffer> params;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.inputs[i]) continue;
    tir::Buffer b;
    for (const auto &[j, buf] : inputs)
      if (j == i) b = buf;
    if (!b) b = tir::make_buffer("unused" + std::to_string(i), tir::int8(), {1});
    params.push_back(b);
  }
  params.insert(params.end(), outputs.begin(), outputs.end());
  return tir::Func{graph::op_name(node.op), params, std::move(body)};
}

int64_t divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

int64_t native_lanes(DataType t) {
  int bytes = std::max(1, t.bits / 8);
  return std::max<int64_t>(4, codegen::cpu::native_vector_bytes() / bytes);
}

void schedule_elementwise(schedule::Schedule &s, const Tensor &out) {
  schedule::Stage &st = s[out];
  std::vector<te::IterVar> axes = st.axis();
  if (axes.empty()) return;
  int64_t total = 1;
  for (const auto &a : axes) total *= a->extent;
  te::IterVar inner = axes.back();
  int64_t e = inner->extent;
  int64_t lanes = native_lanes(out->dtype());
  if (e > 1 && e <= 64) {
    st.vectorize(inner);
  } else if (e > 64 && e % lanes == 0) {
    auto [o, i] = st.split(inner, lanes);
    st.vectorize(i);
    axes.back() = o;
    axes.push_back(i);
  }
  if (total >= 32768 && axes.size() >= 2) {
    te::IterVar outer = axes[0];
    for (size_t k = 1; k + 1 < axes.size(); ++k) outer = st.fuse(outer, axes[k]);
    st.parallel(outer);
  }
}

void schedule_reduction(schedule::Schedule &s, const Tensor &acc, const Tensor &out, int row_axis,
                        int col_axis, int64_t rows, int64_t lanes) {
  schedule::Stage &so = s[out];
  std::vector<te::IterVar> axes = so.axis();
  int64_t R = axes[row_axis]->extent, C = axes[col_axis]->extent;
  int64_t mt = divisor_at_most(R, rows);
  int64_t vt = C <= 64 ? C : divisor_at_most(C, lanes);
  auto [ro, ri] = so.split(axes[row_axis], mt);
  auto [co, ci] = so.split(axes[col_axis], vt);
  std::vector<te::IterVar> outer;
  for (size_t k = 0; k < axes.size(); ++k) {
    if (static_cast<int>(k) != row_axis && static_cast<int>(k) != col_axis) {
      outer.push_back(axes[k]);
    }
  }
  outer.push_back(co);
  outer.push_back(ro);
  std::vector<te::IterVar> order = outer;
  order.push_back(ri);
  order.push_back(ci);
  so.reorder(order);
  if (mt > 1) so.unroll(ri);
  if (vt > 1) so.vectorize(ci);
  schedule::Stage &sa = s[acc];
  sa.compute_at(so, ro);
  std::vector<te::IterVar> aorder;
  const auto &aaxes = sa.axis();
  for (size_t k = 0; k < aaxes.size(); ++k) {
    if (static_cast<int>(k) != row_axis && static_cast<int>(k) != col_axis) {
      aorder.push_back(aaxes[k]);
    }
  }
  for (const auto &r : sa.reduce_axis()) aorder.push_back(r);
  aorder.push_back(aaxes[row_axis]);
  aorder.push_back(aaxes[col_axis]);
  sa.reorder(aorder);
  if (mt > 1) sa.unroll(aaxes[row_axis]);
  if (vt > 1) sa.vectorize(aaxes[col_axis]);
  // Parallel over the outer tiles (all outer loops but the row tile, fused).
  te::IterVar par = outer[0];
  for (size_t k = 1; k + 1 < outer.size(); ++k) par = so.fuse(par, outer[k]);
  so.parallel(par);
}

namespace {

// The lowering of each operator, indexed by OpKind; absent where the CPU backend has none.
const std::vector<std::optional<CpuLowering>> &lowerings() {
  static const std::vector<std::optional<CpuLowering>> table = [] {
    std::vector<CpuLowering> added;
    add_activation_lowerings(added);
    add_compare_lowerings(added);
    add_conv_lowerings(added);
    add_conv_nchwc_lowerings(added);
    add_elementwise_lowerings(added);
    add_indexing_lowerings(added);
    add_layout_lowerings(added);
    add_math_lowerings(added);
    add_matmul_lowerings(added);
    add_softmax_lowerings(added);
    add_batch_norm_lowerings(added);
    add_layer_norm_lowerings(added);
    add_pool_lowerings(added);
    add_quantize_lowerings(added);
    add_rearrange_lowerings(added);
    add_reduce_lowerings(added);
    add_resize_lowerings(added);
    add_shape_lowerings(added);
    std::vector<std::optional<CpuLowering>> by_kind(graph::kNumOpKinds);
    for (const CpuLowering &l : added) {
      VACC_CHECK(!by_kind[static_cast<int>(l.op)])
          << graph::op_name(l.op) << " has two CPU lowerings";
      by_kind[static_cast<int>(l.op)] = l;
    }
    return by_kind;
  }();
  return table;
}

}  // namespace

bool is_host_op(graph::OpKind op) {
  const std::optional<CpuLowering> &l = lowerings()[static_cast<int>(op)];
  return l && !l->build;
}

CpuKernel build_kernel(const graph::Node &node) {
  const std::optional<CpuLowering> &l = lowerings()[static_cast<int>(node.op)];
  if (!l || !l->build) {
    fail("{}: the CPU backend has no kernel for {}", node.describe(), graph::op_name(node.op));
  }
  return l->build(node);
}

namespace {

Tensor int32_param(KernelBuilder &kb, const std::string &name, const std::vector<int64_t> &v) {
  const std::vector<int32_t> v32(v.begin(), v.end());
  return kb.constant_param(
      name, graph::Tensor::from_vector<int32_t>({static_cast<int64_t>(v32.size())}, v32));
}

}  // namespace

QuantEpilogue::QuantEpilogue(KernelBuilder &kb, int64_t channels, bool with_bias)
    : channels_(channels) {
  const Node &node = kb.node();
  std::vector<int64_t> shifts = node.attrs.get_ints("shifts");
  if (shifts.empty()) shifts = {0};
  per_channel_ = shifts.size() > 1;
  shift_ = int32_param(kb, "shifts", shifts);
  const std::vector<int64_t> mult = node.attrs.get_ints("multipliers");
  if (!mult.empty()) {
    per_channel_mult_ = mult.size() > 1;
    mult_ = int32_param(kb, "multipliers", mult);
    pre_clip_ = node.attrs.get_int("pre_clip", 0);
    post_shift_ = node.attrs.get_int("post_shift", 0);
  }
  zero_point_ = node.attrs.get_int("zero_point", 0);
  bias_ = with_bias && kb.has_input(2) ? kb.input(2) : nullptr;
  bias_size_ = bias_ ? bias_->shape()[0] : 0;
  lo_ = node.attrs.get_int("clip_min", -128);
  hi_ = node.attrs.get_int("clip_max", 127);
}

Expr QuantEpilogue::apply(Expr v, Expr c) const {
  if (bias_) {
    const int nb = static_cast<int>(bias_size_);
    v = v + (bias_size_ >= channels_
                 ? (*bias_)({c})
                 : tir::select(c < nb, (*bias_)({tir::min(c, nb - 1)}), iconst(tir::int32(), 0)));
  }
  const Expr s = per_channel_ ? (*shift_)({c}) : (*shift_)({0});
  const DataType i32 = tir::int32();
  v = v >> s;
  if (mult_) {
    v = tir::min(tir::max(v, iconst(i32, -pre_clip_)), iconst(i32, pre_clip_));
    v = (v * (per_channel_mult_ ? (*mult_)({c}) : (*mult_)({0}))) >> iconst(i32, post_shift_);
  }
  if (zero_point_) v = v + iconst(i32, zero_point_);
  v = tir::min(tir::max(v, iconst(i32, lo_)), iconst(i32, hi_));
  return tir::cast(tir::int8(), v);
}

}  // namespace vacc::ops::cpu
