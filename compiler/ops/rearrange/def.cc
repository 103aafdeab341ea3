// Operators that move elements without arithmetic: Split (sizes from the split input, its older
// attribute, or equal parts), Tile, DepthToSpace (DCR and CRD), SpaceToDepth and Trilu (the
// upper or lower triangle of the last two axes, offset by k): reference kernels, shape inference,
// import rules and OpDefs.
#include <cstring>

#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::ops {

std::vector<int64_t> split_sizes(const Node &node, const Shape &x) {
  const int axis =
      normalize_axis(node.attrs.get_int("axis", 0), static_cast<int>(x.size()), "axis");
  const int64_t dim = x[axis], parts = static_cast<int64_t>(node.outputs.size());
  std::vector<int64_t> sizes;
  if (const Value *s = node.input(1)) {
    VACC_CHECK(s->is_constant()) << "Split's sizes are checked constant by its inference";
    sizes = s->constant->to_int_vector();
    if (static_cast<int64_t>(sizes.size()) != parts)
      fail("split has {} sizes for {} outputs", sizes.size(), parts);
    int64_t total = 0;
    for (int64_t v : sizes) {
      if (v < 0) fail("split has a negative size {}", v);
      total += v;
    }
    if (total != dim) fail("split sizes add up to {}, but axis {} has {}", total, axis, dim);
    return sizes;
  }
  if (parts == 0 || dim % parts != 0)
    fail("axis {} of size {} does not split into {} equal parts", axis, dim, parts);
  return std::vector<int64_t>(parts, dim / parts);
}

namespace {

// --- Split

// Before opset 13 the sizes are an attribute.
void import_split(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) {
  if (!attrs.has("split")) return;
  std::vector<int64_t> split = attrs.get_ints("split");
  attrs.erase("split");
  inputs.resize(1);
  inputs.push_back(ctx.constant(
      "split", Tensor::from_vector<int64_t>({static_cast<int64_t>(split.size())}, split)));
}

void infer_split(Node &n) {
  Value &x = input_of(n, 0, "input");
  if (x.rank() == 0) fail("cannot split a scalar");
  const int axis = normalize_axis(n.attrs.get_int("axis", 0), x.rank(), "axis");
  if (n.input(1)) const_input(n, 1, "split");
  const std::vector<int64_t> sizes = split_sizes(n, x.shape);
  for (size_t k = 0; k < sizes.size(); ++k) {
    Shape s = x.shape;
    s[axis] = sizes[k];
    set_out(n, k, x.dtype, s);
  }
}

Outputs split(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  const int axis = normalize_axis(node.attrs.get_int("axis", 0), x.rank(), "axis");
  const std::vector<int64_t> sizes = split_sizes(node, x.shape());
  int64_t outer = 1, inner = dtype_size(x.dtype());
  for (int d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  Outputs outs;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    Shape s = x.shape();
    s[axis] = size;
    Tensor t(x.dtype(), s);
    for (int64_t o = 0; o < outer && size * inner > 0; ++o)
      std::memcpy(t.raw() + o * size * inner, x.raw() + (o * x.dim(axis) + offset) * inner,
                  size * inner);
    offset += size;
    outs.push_back(std::move(t));
  }
  return outs;
}

// --- Tile, DepthToSpace, SpaceToDepth, Trilu: one output element from one input element.

std::vector<int64_t> repeats(const Node &n) {
  const Value *r = n.input(1);
  VACC_CHECK(r && r->is_constant()) << "Tile's repeats are checked constant by its inference";
  return r->constant->to_int_vector();
}

void infer_tile(Node &n) {
  Value &x = input_of(n, 0, "input");
  const_input(n, 1, "repeats");
  const std::vector<int64_t> reps = repeats(n);
  if (static_cast<int>(reps.size()) != x.rank())
    fail("repeats has {} values for an input of rank {}", reps.size(), x.rank());
  Shape out = x.shape;
  for (int d = 0; d < x.rank(); ++d) {
    if (reps[d] < 0) fail("repeats has a negative value {}", reps[d]);
    out[d] *= reps[d];
  }
  set_out(n, 0, x.dtype, out);
}

int64_t block_size(const Node &n) {
  const int64_t b = n.attrs.get_int("blocksize");
  if (b <= 0) fail("attribute 'blocksize' must be positive, got {}", b);
  return b;
}

bool crd_mode(const Node &n) {
  const std::string mode = n.attrs.get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") fail("attribute 'mode' is '{}', expected DCR or CRD", mode);
  return mode == "CRD";
}

void infer_depth_to_space(Node &n) {
  Value &x = input_of(n, 0, "input");
  if (x.rank() != 4) fail("input has rank {}, expected 4 (N, C, H, W)", x.rank());
  const int64_t b = block_size(n);
  crd_mode(n);
  if (x.shape[1] % (b * b) != 0)
    fail("{} channels are not a multiple of blocksize^2 = {}", x.shape[1], b * b);
  set_out(n, 0, x.dtype, {x.shape[0], x.shape[1] / (b * b), x.shape[2] * b, x.shape[3] * b});
}

void infer_space_to_depth(Node &n) {
  Value &x = input_of(n, 0, "input");
  if (x.rank() != 4) fail("input has rank {}, expected 4 (N, C, H, W)", x.rank());
  const int64_t b = block_size(n);
  if (x.shape[2] % b != 0 || x.shape[3] % b != 0)
    fail("height {} and width {} must be multiples of blocksize {}", x.shape[2], x.shape[3], b);
  set_out(n, 0, x.dtype, {x.shape[0], x.shape[1] * b * b, x.shape[2] / b, x.shape[3] / b});
}

void infer_trilu(Node &n) {
  Value &x = input_of(n, 0, "input");
  if (x.rank() < 2) fail("input has rank {}, expected at least 2", x.rank());
  if (n.input(1)) const_input(n, 1, "k");
  set_out(n, 0, x.dtype, x.shape);
}

// Tile, DepthToSpace, SpaceToDepth and Trilu as an index map: the input element each output
// element reads, or false where Trilu zeroes it.
struct RearrangeMap {
  RearrangeMap(const Node &node, const Shape &x);
  bool source(const std::vector<int64_t> &y, std::vector<int64_t> *src) const;
  OpKind op;
  Shape x;
  int64_t block = 1, k = 0;
  bool crd = false, upper = true;
};

RearrangeMap::RearrangeMap(const Node &node, const Shape &x) : op(node.op), x(x) {
  if (op == OpKind::kDepthToSpace || op == OpKind::kSpaceToDepth) block = block_size(node);
  if (op == OpKind::kDepthToSpace) crd = crd_mode(node);
  if (op == OpKind::kTrilu) {
    upper = node.attrs.get_int("upper", 1) != 0;
    if (const Value *kv = node.input(1)) k = kv->constant->as_int(0);
  }
}

bool RearrangeMap::source(const std::vector<int64_t> &y, std::vector<int64_t> *src) const {
  std::vector<int64_t> &s = *src;
  const size_t r = y.size();
  switch (op) {
    case OpKind::kTile:
      for (size_t d = 0; d < r; ++d) s[d] = y[d] % x[d];
      return true;
    case OpKind::kDepthToSpace: {
      // y[n, c, h*b + i, w*b + j] = x[n, channel, h, w]
      const int64_t c_out = x[1] / (block * block);
      const int64_t i = y[2] % block, j = y[3] % block;
      const int64_t channel = crd ? (y[1] * block + i) * block + j : (i * block + j) * c_out + y[1];
      s = {y[0], channel, y[2] / block, y[3] / block};
      return true;
    }
    case OpKind::kSpaceToDepth: {
      // y[n, (i*b + j)*C + c, h, w] = x[n, c, h*b + i, w*b + j]
      const int64_t c_in = x[1], tap = y[1] / c_in;
      s = {y[0], y[1] % c_in, y[2] * block + tap / block, y[3] * block + tap % block};
      return true;
    }
    case OpKind::kTrilu: {
      s = y;
      const int64_t diagonal = y[r - 1] - y[r - 2];
      return upper ? diagonal >= k : diagonal <= k;
    }
    default:
      VACC_CHECK(false) << "rearrange: " << op_name(op);
      return false;
  }
}

Outputs rearrange(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  const Shape &y_shape = node.outputs[0]->shape;
  Tensor out(x.dtype(), y_shape);
  const int rank = static_cast<int>(y_shape.size()), es = dtype_size(x.dtype());
  std::vector<int64_t> stride(x.rank(), 1), idx(rank, 0), src(x.rank());
  for (int d = x.rank() - 2; d >= 0; --d) stride[d] = stride[d + 1] * x.dim(d + 1);
  const RearrangeMap map(node, x.shape());
  for (int64_t i = 0; i < out.size(); ++i) {
    int64_t from = 0;
    if (map.source(idx, &src)) {
      for (int d = 0; d < x.rank(); ++d) from += src[d] * stride[d];
      std::memcpy(out.raw() + i * es, x.raw() + from * es, es);
    } else {
      std::memset(out.raw() + i * es, 0, es);
    }
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < y_shape[d]) break;
      idx[d] = 0;
    }
  }
  return single(std::move(out));
}

}  // namespace

void add_rearrange_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kSplit,
                  .name = "Split",
                  .onnx = true,
                  .opset_min = 2,  // Split-1 may take its sizes as a second input or attribute
                  .import = import_split,
                  .infer = infer_split,
                  .reference = split});
  defs.push_back({.op = OpKind::kTile,
                  .name = "Tile",
                  .onnx = true,
                  .opset_min = 6,  // Tile-1 takes tiles and axis inputs
                  .infer = infer_tile,
                  .reference = rearrange});
  defs.push_back({.op = OpKind::kDepthToSpace,
                  .name = "DepthToSpace",
                  .onnx = true,
                  .infer = infer_depth_to_space,
                  .reference = rearrange});
  defs.push_back({.op = OpKind::kSpaceToDepth,
                  .name = "SpaceToDepth",
                  .onnx = true,
                  .infer = infer_space_to_depth,
                  .reference = rearrange});
  defs.push_back({.op = OpKind::kTrilu,
                  .name = "Trilu",
                  .onnx = true,
                  .opset_min = 14,
                  .infer = infer_trilu,
                  .reference = rearrange});
}

}  // namespace vacc::graph::ops
