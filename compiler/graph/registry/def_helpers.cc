// What the operator families share: shape inference checks with their diagnostics, and the
// importer's context.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "families.h"

namespace vacc::graph {

Value *ImportContext::constant(const char *role, Tensor t) const {
  return graph.add_constant(graph.unique_name(node_name + "." + role), std::move(t));
}

namespace ops {

Value &input_of(Node &n, size_t i, const char *role) {
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

namespace {

// The graph inputs whose data `v` is computed from, quoted and comma-separated.
std::string data_sources(const Value &v) {
  std::vector<const Value *> todo = {&v}, found;
  std::vector<const Node *> seen;
  while (!todo.empty()) {
    const Value *x = todo.back();
    todo.pop_back();
    if (!x || x->is_constant()) continue;
    if (!x->producer) {
      if (std::find(found.begin(), found.end(), x) == found.end()) found.push_back(x);
      continue;
    }
    if (std::find(seen.begin(), seen.end(), x->producer) != seen.end()) continue;
    seen.push_back(x->producer);
    for (const Value *in : x->producer->inputs) todo.push_back(in);
  }
  std::string s;
  for (const Value *x : found) s += (s.empty() ? "'" : ", '") + x->name + "'";
  return s;
}

}  // namespace

const Tensor &const_input(Node &n, size_t i, const char *role) {
  Value &v = input_of(n, i, role);
  if (!v.is_constant()) {
    const std::string sources = data_sources(v);
    fail(
        "input '{}' ({}) decides the output's shape but is not known at compile time: it is "
        "computed from the data of graph input {}; vacc's shapes are static (shape "
        "computations fold only over tensors' shapes), so give that input as a constant or "
        "re-export the model with this shape fixed",
        v.name, role, sources.empty() ? "(unknown)" : sources);
  }
  return *v.constant;
}

void check_bias(const Value *b, int64_t channels) {
  if (b && (b->rank() != 1 || b->shape[0] != channels)) {
    fail("bias '{}' has shape {}, expected [{}]", b->name, shape_str(b->shape), channels);
  }
}

DType zero_point_dtype(Node &n, size_t i, DType fallback) {
  Value *zp = n.input(i);
  return zp ? zp->dtype : fallback;
}

void check_requant_attrs(Node &n, int64_t channels) {
  std::vector<int64_t> shifts = n.attrs.get_ints("shifts");
  if (shifts.size() != 1 && static_cast<int64_t>(shifts.size()) != channels) {
    fail("attribute 'shifts' has {} values, expected 1 or {}", shifts.size(), channels);
  }
  if (n.attrs.get_int("clip_min", -128) > n.attrs.get_int("clip_max", 127)) {
    fail("clip_min is greater than clip_max");
  }
  if (n.attrs.has("multipliers")) {
    std::vector<int64_t> m = n.attrs.get_ints("multipliers");
    if (m.size() != 1 && static_cast<int64_t>(m.size()) != channels)
      fail("attribute 'multipliers' has {} values, expected 1 or {}", m.size(), channels);
    const int64_t pre_clip = n.attrs.get_int("pre_clip", 0);
    for (int64_t v : m)
      if (v < 0 || pre_clip < 0 || v * pre_clip > std::numeric_limits<int32_t>::max())
        fail("multiplier {} times pre_clip {} leaves int32", v, pre_clip);
  }
}

int64_t weight_macs(const Node &node, size_t w_index) {
  const Value *out = node.outputs[0], *w = node.input(w_index);
  if (!w) return 0;
  // Blocked results ([N/bn, C/bc, ..., bn, bc]) hold C/bc blocks of bc channels.
  const int64_t oc = out->layout.blocked ? out->shape.at(1) * out->shape.back()
                     : out->rank() >= 2  ? out->shape.at(1)
                                         : out->shape.at(0);
  return oc ? num_elements(out->shape) * (num_elements(w->shape) / oc) : 0;
}

// Offsets into a (broadcast) input for each element of the output, in row-major order.
std::vector<int64_t> broadcast_offsets(const Shape &in, const Shape &out) {
  int rank = static_cast<int>(out.size());
  std::vector<int64_t> stride(rank, 0);
  int64_t s = 1;
  for (int i = rank - 1, j = static_cast<int>(in.size()) - 1; i >= 0; --i, --j) {
    int64_t d = j >= 0 ? in[j] : 1;
    stride[i] = d == 1 ? 0 : s;
    s *= d;
  }
  int64_t total = num_elements(out);
  std::vector<int64_t> offsets(total);
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t n = 0; n < total; ++n) {
    offsets[n] = off;
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < out[i]) {
        off += stride[i];
        break;
      }
      off -= stride[i] * (out[i] - 1);
      idx[i] = 0;
    }
  }
  return offsets;
}

}  // namespace ops
}  // namespace vacc::graph
