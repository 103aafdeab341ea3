#include "vacc/graph/shape_inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "kernels/kernels.h"
#include "vacc/support/limits.h"
#include "window.h"

namespace vacc::graph {

Shape broadcast_shapes(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      fail("shapes {} and {} cannot be broadcast together", shape_str(a), shape_str(b));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int normalize_axis(int64_t axis, int rank, const char *what, bool inclusive) {
  int64_t hi = inclusive ? rank : rank - 1;
  if (axis < -rank || axis > hi) {
    fail("{} {} is out of range for a tensor of rank {}", what, axis, rank);
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

namespace {

Value &in(Node &n, size_t i, const char *role) {
  Value *v = n.input(i);
  if (!v) fail("input {} ({}) is missing", i, role);
  return *v;
}

void set_out(Node &n, size_t i, DType dtype, Shape shape) {
  if (i < n.outputs.size() && n.outputs[i]) {
    n.outputs[i]->dtype = dtype;
    n.outputs[i]->shape = std::move(shape);
  }
}

void require_float(const Value &v, const char *role) {
  if (v.dtype != DType::kFloat32 && v.dtype != DType::kFloat64) {
    fail("input '{}' ({}) has type {}, expected a float type", v.name, role, dtype_name(v.dtype));
  }
}

void require_dtype(const Value &v, const char *role, DType dtype) {
  if (v.dtype != dtype) {
    fail("input '{}' ({}) has type {}, expected {}", v.name, role, dtype_name(v.dtype),
         dtype_name(dtype));
  }
}

void require_int8ish(const Value &v, const char *role) {
  if (v.dtype != DType::kInt8 && v.dtype != DType::kUInt8) {
    fail("input '{}' ({}) has type {}, expected i8 or u8", v.name, role, dtype_name(v.dtype));
  }
}

const Tensor &const_input(Node &n, size_t i, const char *role) {
  Value &v = in(n, i, role);
  if (!v.is_constant()) {
    fail("input '{}' ({}) must be a constant: vacc needs static shapes (freeze it at import)",
         v.name, role);
  }
  return *v.constant;
}

// Conv-family output shape: x [N, C, spatial...], w [M, C/group, kernel...].
Shape conv_shape(Node &n, const Value &x, const Value &w) {
  if (x.rank() < 3) fail("input '{}' (X) has rank {}, expected at least 3", x.name, x.rank());
  if (w.rank() != x.rank()) {
    fail("weight '{}' has shape {}, expected rank {} like the input {}", w.name, shape_str(w.shape),
         x.rank(), shape_str(x.shape));
  }
  int64_t group = n.attrs.get_int("group", 1);
  if (group <= 0) fail("attribute 'group' must be positive, got {}", group);
  if (x.shape[1] != w.shape[1] * group) {
    fail("input channels {} do not match weight '{}' {} with group {} (expects {} channels)",
         x.shape[1], w.name, shape_str(w.shape), group, w.shape[1] * group);
  }
  if (w.shape[0] % group != 0) {
    fail("output channels {} are not a multiple of group {}", w.shape[0], group);
  }
  std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  Window win = make_window(n.attrs, spatial, kernel, false);
  Shape out = {x.shape[0], w.shape[0]};
  out.insert(out.end(), win.out.begin(), win.out.end());
  return out;
}

void check_bias(const Value *b, int64_t channels) {
  if (b && (b->rank() != 1 || b->shape[0] != channels)) {
    fail("bias '{}' has shape {}, expected [{}]", b->name, shape_str(b->shape), channels);
  }
}

Shape matmul_shape(const Value &a, const Value &b) {
  if (a.rank() < 1 || b.rank() < 1) fail("MatMul inputs must have rank >= 1");
  Shape sa = a.shape, sb = b.shape;
  bool va = sa.size() == 1, vb = sb.size() == 1;
  if (va) sa.insert(sa.begin(), 1);
  if (vb) sb.push_back(1);
  if (sa.back() != sb[sb.size() - 2]) {
    fail("inner dimensions differ: '{}' {} times '{}' {}", a.name, shape_str(a.shape), b.name,
         shape_str(b.shape));
  }
  Shape batch = broadcast_shapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2));
  Shape out = batch;
  if (!va) out.push_back(sa[sa.size() - 2]);
  if (!vb) out.push_back(sb.back());
  return out;
}

DType zero_point_dtype(Node &n, size_t i, DType fallback) {
  Value *zp = n.input(i);
  return zp ? zp->dtype : fallback;
}

Shape pooled_shape(Node &n, const Value &x, bool ceil_allowed) {
  if (x.rank() < 3) fail("input '{}' has rank {}, expected at least 3", x.name, x.rank());
  std::vector<int64_t> kernel = n.attrs.get_ints("kernel_shape");
  if (static_cast<int>(kernel.size()) != x.rank() - 2) {
    fail("attribute 'kernel_shape' has {} values, expected {}", kernel.size(), x.rank() - 2);
  }
  std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  Window win =
      make_window(n.attrs, spatial, kernel, ceil_allowed && n.attrs.get_int("ceil_mode", 0) != 0);
  Shape out = {x.shape[0], x.shape[1]};
  out.insert(out.end(), win.out.begin(), win.out.end());
  return out;
}

void check_requant_attrs(Node &n, int64_t channels) {
  std::vector<int64_t> shifts = n.attrs.get_ints("shifts");
  if (shifts.size() != 1 && static_cast<int64_t>(shifts.size()) != channels) {
    fail("attribute 'shifts' has {} values, expected 1 or {}", shifts.size(), channels);
  }
  if (n.attrs.get_int("clip_min", -128) > n.attrs.get_int("clip_max", 127)) {
    fail("clip_min is greater than clip_max");
  }
}

void infer_output_shapes(Node &n) {
  switch (n.op) {
    case OpKind::kConv: {
      Value &x = in(n, 0, "X"), &w = in(n, 1, "W");
      require_float(x, "X");
      require_dtype(w, "W", x.dtype);
      Shape out = conv_shape(n, x, w);
      check_bias(n.input(2), w.shape[0]);
      set_out(n, 0, x.dtype, out);
      return;
    }
    case OpKind::kConvInteger: {
      Value &x = in(n, 0, "x"), &w = in(n, 1, "w");
      require_int8ish(x, "x");
      require_int8ish(w, "w");
      set_out(n, 0, DType::kInt32, conv_shape(n, x, w));
      return;
    }
    case OpKind::kQLinearConv: {
      Value &x = in(n, 0, "x"), &w = in(n, 3, "w");
      require_int8ish(x, "x");
      require_int8ish(w, "w");
      in(n, 1, "x_scale");
      in(n, 4, "w_scale");
      in(n, 6, "y_scale");
      Shape out = conv_shape(n, x, w);
      check_bias(n.input(8), w.shape[0]);
      set_out(n, 0, zero_point_dtype(n, 7, DType::kUInt8), out);
      return;
    }
    case OpKind::kQConv:
    case OpKind::kQDense: {
      Value x = in(n, 0, "x"), w = in(n, 1, "w");
      require_dtype(x, "x", DType::kInt8);
      require_dtype(w, "w", DType::kInt8);
      // Packed operands (pack_layout.h): computed on their plain, channel-padded shapes.
      bool packed = x.layout.blocked;
      if (packed) {
        if (!w.layout.blocked) fail("packed input with unpacked weights");
        x.shape = kernels::unblocked_shape(x.shape);
        w.shape = kernels::unblocked_shape(w.shape);
      }
      Shape out;
      if (n.op == OpKind::kQConv) {
        out = conv_shape(n, x, w);
      } else {
        if (x.rank() != 2 || w.rank() != 2 || x.shape[1] != w.shape[1]) {
          fail("x {} and w {} must be [N,K] and [M,K]", shape_str(x.shape), shape_str(w.shape));
        }
        out = {x.shape[0], w.shape[0]};
      }
      check_bias(n.input(2), w.shape[0]);
      check_requant_attrs(n, w.shape[0]);
      if (packed) {
        int64_t bn = n.attrs.get_int("out_block_n"), bc = n.attrs.get_int("out_block_c");
        out = kernels::blocked_shape(out, bn, bc);
        set_out(n, 0, DType::kInt8, out);
        n.outputs[0]->layout = {true, static_cast<int>(bn), static_cast<int>(bc)};
      } else {
        set_out(n, 0, DType::kInt8, out);
      }
      // A fused residual add's skip tensor (graph/passes/fuse_residual_adds.h): the output's
      // shape and layout.
      if (const Value *skip = n.input(3)) {
        if (n.op != OpKind::kQConv || skip->dtype != DType::kInt8 || skip->shape != out)
          fail("residual input '{}' {} {} must be int8 of the output's shape {}", skip->name,
               dtype_name(skip->dtype), shape_str(skip->shape), shape_str(out));
      }
      return;
    }
    case OpKind::kConvTranspose: {
      Value &x = in(n, 0, "X"), &w = in(n, 1, "W");
      require_float(x, "X");
      if (x.rank() < 3 || w.rank() != x.rank()) {
        fail("input {} and weight {} must have the same rank >= 3", shape_str(x.shape),
             shape_str(w.shape));
      }
      int64_t group = n.attrs.get_int("group", 1);
      if (x.shape[1] != w.shape[0]) {
        fail("input channels {} differ from the weight's first dimension {}", x.shape[1],
             w.shape[0]);
      }
      std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
      std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
      Window win = make_transpose_window(n.attrs, spatial, kernel);
      Shape out = {x.shape[0], w.shape[1] * group};
      out.insert(out.end(), win.out.begin(), win.out.end());
      check_bias(n.input(2), out[1]);
      set_out(n, 0, x.dtype, out);
      return;
    }
    case OpKind::kGemm: {
      Value &a = in(n, 0, "A"), &b = in(n, 1, "B");
      require_float(a, "A");
      if (a.rank() != 2 || b.rank() != 2) {
        fail("inputs must be matrices, got {} and {}", shape_str(a.shape), shape_str(b.shape));
      }
      bool ta = n.attrs.get_int("transA", 0), tb = n.attrs.get_int("transB", 0);
      int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
      int64_t kb = tb ? b.shape[1] : b.shape[0], nn = tb ? b.shape[0] : b.shape[1];
      if (k != kb) {
        fail("inner dimensions differ: A {} (transA={}) and B {} (transB={})", shape_str(a.shape),
             int(ta), shape_str(b.shape), int(tb));
      }
      if (Value *c = n.input(2)) {
        Shape bc = broadcast_shapes(c->shape, {m, nn});
        if (bc != Shape{m, nn})
          fail("C {} does not broadcast to [{},{}]", shape_str(c->shape), m, nn);
      }
      set_out(n, 0, a.dtype, {m, nn});
      return;
    }
    case OpKind::kMatMul: {
      Value &a = in(n, 0, "A"), &b = in(n, 1, "B");
      require_dtype(b, "B", a.dtype);
      set_out(n, 0, a.dtype, matmul_shape(a, b));
      return;
    }
    case OpKind::kMatMulInteger: {
      Value &a = in(n, 0, "A"), &b = in(n, 1, "B");
      require_int8ish(a, "A");
      require_int8ish(b, "B");
      set_out(n, 0, DType::kInt32, matmul_shape(a, b));
      return;
    }
    case OpKind::kQLinearMatMul: {
      Value &a = in(n, 0, "a"), &b = in(n, 3, "b");
      require_int8ish(a, "a");
      require_int8ish(b, "b");
      set_out(n, 0, zero_point_dtype(n, 7, DType::kUInt8), matmul_shape(a, b));
      return;
    }
    case OpKind::kRelu:
    case OpKind::kLeakyRelu:
    case OpKind::kSigmoid:
    case OpKind::kIdentity:
    case OpKind::kClip: {
      Value &x = in(n, 0, "X");
      if (n.op == OpKind::kSigmoid || n.op == OpKind::kLeakyRelu) require_float(x, "X");
      set_out(n, 0, x.dtype, x.shape);
      return;
    }
    case OpKind::kSoftmax: {
      Value &x = in(n, 0, "input");
      require_float(x, "input");
      // The importer makes `axis` explicit; coerce_2d marks opset < 13 semantics.
      normalize_axis(n.attrs.get_int("axis", -1), x.rank(), "axis",
                     n.attrs.get_int("coerce_2d", 0) != 0);
      set_out(n, 0, x.dtype, x.shape);
      return;
    }
    case OpKind::kDropout: {
      Value &x = in(n, 0, "data");
      set_out(n, 0, x.dtype, x.shape);
      set_out(n, 1, DType::kBool, x.shape);
      return;
    }
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv: {
      Value &a = in(n, 0, "A"), &b = in(n, 1, "B");
      require_dtype(b, "B", a.dtype);
      set_out(n, 0, a.dtype, broadcast_shapes(a.shape, b.shape));
      return;
    }
    case OpKind::kQAdd: {
      Value &a = in(n, 0, "a"), &b = in(n, 1, "b");
      require_dtype(a, "a", DType::kInt8);
      require_dtype(b, "b", DType::kInt8);
      if (a.shape != b.shape) {
        fail("inputs must have the same shape, got {} and {}", shape_str(a.shape),
             shape_str(b.shape));
      }
      if (a.layout != b.layout) fail("inputs have different layouts");
      set_out(n, 0, DType::kInt8, a.shape);
      if (n.outputs[0]) n.outputs[0]->layout = a.layout;
      return;
    }
    case OpKind::kRequantize: {
      Value &x = in(n, 0, "x");
      require_dtype(x, "x", DType::kInt32);
      check_requant_attrs(n, x.rank() >= 2 ? x.shape[1] : 1);
      set_out(n, 0, DType::kInt8, x.shape);
      return;
    }
    case OpKind::kBatchNormalization: {
      Value &x = in(n, 0, "X");
      require_float(x, "X");
      if (x.rank() < 2) fail("input has rank {}, expected at least 2", x.rank());
      const char *roles[] = {"scale", "B", "mean", "var"};
      for (int i = 1; i <= 4; ++i) {
        Value &p = in(n, i, roles[i - 1]);
        if (p.rank() != 1 || p.shape[0] != x.shape[1]) {
          fail("input '{}' ({}) has shape {}, expected [{}] (one per channel)", p.name,
               roles[i - 1], shape_str(p.shape), x.shape[1]);
        }
      }
      set_out(n, 0, x.dtype, x.shape);
      set_out(n, 1, x.dtype, {x.shape[1]});
      set_out(n, 2, x.dtype, {x.shape[1]});
      return;
    }
    case OpKind::kMaxPool: {
      Value &x = in(n, 0, "X");
      Shape out = pooled_shape(n, x, true);
      set_out(n, 0, x.dtype, out);
      set_out(n, 1, DType::kInt64, out);
      return;
    }
    case OpKind::kAveragePool: {
      Value &x = in(n, 0, "X");
      require_float(x, "X");
      set_out(n, 0, x.dtype, pooled_shape(n, x, true));
      return;
    }
    case OpKind::kGlobalAveragePool: {
      Value &x = in(n, 0, "X");
      require_float(x, "X");
      if (x.rank() < 3) fail("input has rank {}, expected at least 3", x.rank());
      Shape out = x.shape;
      std::fill(out.begin() + 2, out.end(), 1);
      set_out(n, 0, x.dtype, out);
      return;
    }
    case OpKind::kFlatten: {
      Value &x = in(n, 0, "input");
      int axis = normalize_axis(n.attrs.get_int("axis", 1), x.rank(), "axis", true);
      int64_t outer = 1, inner = 1;
      for (int i = 0; i < x.rank(); ++i) (i < axis ? outer : inner) *= x.shape[i];
      set_out(n, 0, x.dtype, {outer, inner});
      return;
    }
    case OpKind::kReshape: {
      Value &x = in(n, 0, "data");
      std::vector<int64_t> target = const_input(n, 1, "shape").to_int_vector();
      bool allowzero = n.attrs.get_int("allowzero", 0) != 0;
      Shape out(target.size());
      int infer = -1;
      int64_t known = 1;
      for (size_t i = 0; i < target.size(); ++i) {
        if (target[i] == -1) {
          if (infer >= 0) fail("shape has more than one -1");
          infer = static_cast<int>(i);
          continue;
        }
        if (target[i] == 0 && !allowzero) {
          if (i >= x.shape.size()) fail("shape copies dimension {} that the input lacks", i);
          out[i] = x.shape[i];
        } else if (target[i] < 0) {
          fail("shape has an invalid dimension {}", target[i]);
        } else {
          out[i] = target[i];
        }
        known *= out[i];
      }
      int64_t total = num_elements(x.shape);
      if (infer >= 0) {
        if (known == 0 || total % known != 0) {
          fail("cannot reshape {} into [{}]", shape_str(x.shape), fmt::join(target, ","));
        }
        out[infer] = total / known;
      }
      if (num_elements(out) != total) {
        fail("cannot reshape {} ({} elements) into {} ({} elements)", shape_str(x.shape), total,
             shape_str(out), num_elements(out));
      }
      set_out(n, 0, x.dtype, out);
      return;
    }
    case OpKind::kTranspose: {
      Value &x = in(n, 0, "data");
      std::vector<int64_t> perm = n.attrs.get_ints("perm");
      if (perm.empty()) {
        for (int i = x.rank() - 1; i >= 0; --i) perm.push_back(i);
      }
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int64_t> iota(x.rank());
      std::iota(iota.begin(), iota.end(), 0);
      if (sorted != iota)
        fail("attribute 'perm' [{}] is not a permutation of the {} axes", fmt::join(perm, ","),
             x.rank());
      Shape out(x.rank());
      for (int i = 0; i < x.rank(); ++i) out[i] = x.shape[perm[i]];
      set_out(n, 0, x.dtype, out);
      return;
    }
    case OpKind::kConcat: {
      if (n.inputs.empty()) fail("needs at least one input");
      Value &first = in(n, 0, "inputs");
      int axis = normalize_axis(n.attrs.get_int("axis"), first.rank(), "axis");
      Shape out = first.shape;
      out[axis] = 0;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        Value &v = in(n, i, "inputs");
        require_dtype(v, "inputs", first.dtype);
        bool ok = v.rank() == first.rank();
        for (int d = 0; ok && d < v.rank(); ++d) ok = d == axis || v.shape[d] == first.shape[d];
        if (!ok) {
          fail("input {} '{}' has shape {}, incompatible with {} along axis {}", i, v.name,
               shape_str(v.shape), shape_str(first.shape), axis);
        }
        out[axis] += v.shape[axis];
      }
      set_out(n, 0, first.dtype, out);
      return;
    }
    case OpKind::kPad: {
      Value &x = in(n, 0, "data");
      std::vector<int64_t> pads = const_input(n, 1, "pads").to_int_vector();
      if (static_cast<int>(pads.size()) != 2 * x.rank()) {
        fail("pads has {} values, expected {} (begin and end per axis)", pads.size(), 2 * x.rank());
      }
      std::string mode = n.attrs.get_string("mode", "constant");
      if (mode != "constant" && mode != "reflect" && mode != "edge") {
        fail("attribute 'mode' has unknown value '{}'", mode);
      }
      Shape out = x.shape;
      for (int i = 0; i < x.rank(); ++i) {
        out[i] += pads[i] + pads[i + x.rank()];
        if (out[i] < 0) fail("pads remove more than the whole of axis {}", i);
        if (mode == "reflect" && (pads[i] >= x.shape[i] || pads[i + x.rank()] >= x.shape[i])) {
          fail("reflect padding of axis {} must be smaller than its size {}", i, x.shape[i]);
        }
      }
      set_out(n, 0, x.dtype, out);
      return;
    }
    case OpKind::kConstant: {
      const Tensor &t = n.attrs.get_tensor("value");
      set_out(n, 0, t.dtype(), t.shape());
      return;
    }
    case OpKind::kQuantizeLinear: {
      Value &x = in(n, 0, "x");
      require_float(x, "x");
      in(n, 1, "y_scale");
      set_out(n, 0, zero_point_dtype(n, 2, DType::kUInt8), x.shape);
      return;
    }
    case OpKind::kDequantizeLinear: {
      Value &x = in(n, 0, "x");
      in(n, 1, "x_scale");
      set_out(n, 0, DType::kFloat32, x.shape);
      return;
    }
    case OpKind::kPackNCHWnc: {
      Value &x = in(n, 0, "x");
      if (x.rank() < 2) fail("input has rank {}, expected at least 2", x.rank());
      int64_t bn = n.attrs.get_int("block_n"), bc = n.attrs.get_int("block_c");
      set_out(n, 0, x.dtype,
              kernels::blocked_shape(kernels::unfolded_shape(x.shape, n.attrs), bn, bc));
      if (n.outputs[0]) n.outputs[0]->layout = {true, int(bn), int(bc)};
      return;
    }
    case OpKind::kUnpackNCHWnc: {
      Value &x = in(n, 0, "x");
      Shape out = n.attrs.get_ints("shape");
      int64_t bn = n.attrs.get_int("block_n"), bc = n.attrs.get_int("block_c");
      if (out.size() + 2 != x.shape.size() || x.shape[x.rank() - 2] != bn || x.shape.back() != bc) {
        fail("input {} is not a blocked form of {}", shape_str(x.shape), shape_str(out));
      }
      set_out(n, 0, x.dtype, out);
      return;
    }
  }
  fail("no shape inference for {}", op_name(n.op));
}

}  // namespace

void infer_node(Node &n) {
  infer_output_shapes(n);
  // Bounded here, before the importer, a pass or the executor allocates what a shape claims.
  for (const Value *out : n.outputs)
    if (out)
      checked_tensor_bytes(out->shape, dtype_size(out->dtype),
                           fmt::format("output '{}'", out->name));
}

void infer_shapes(Graph &graph) {
  int index = 0;
  for (Node *node : graph.nodes()) {
    try {
      infer_node(*node);
    } catch (const Error &e) {
      fail("{}: {}", node->describe(index), e.what());
    }
    ++index;
  }
}

}  // namespace vacc::graph
