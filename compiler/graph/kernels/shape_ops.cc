// Data movement: Flatten and Reshape (same bytes, new shape), Transpose, Concat and Pad
// (constant, reflect, edge; negative pads crop). All are dtype-agnostic byte copies.
#include <cstring>

#include "kernels.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::kernels {

Outputs reshape_like(const Node &node, const Inputs &in) {
  Outputs outs;
  outs.push_back(in[0]->reshaped(node.outputs[0]->shape));
  return outs;
}

Outputs transpose(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  int rank = x.rank();
  std::vector<int64_t> perm = node.attrs.get_ints("perm");
  if (perm.empty()) {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  Tensor out(x.dtype(), node.outputs[0]->shape);
  std::vector<int64_t> in_stride(rank, 1);
  for (int i = rank - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * x.dim(i + 1);
  // Stride in the input of each output axis.
  std::vector<int64_t> stride(rank);
  for (int i = 0; i < rank; ++i) stride[i] = in_stride[perm[i]];
  int es = dtype_size(x.dtype());
  const uint8_t *src = x.raw();
  uint8_t *dst = out.raw();
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t n = 0; n < out.size(); ++n) {
    std::memcpy(dst + n * es, src + off * es, es);
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < out.dim(i)) {
        off += stride[i];
        break;
      }
      off -= stride[i] * (out.dim(i) - 1);
      idx[i] = 0;
    }
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

Outputs concat(const Node &node, const Inputs &in) {
  Tensor out(node.outputs[0]->dtype, node.outputs[0]->shape);
  int axis = normalize_axis(node.attrs.get_int("axis"), out.rank(), "axis");
  int64_t outer = 1;
  for (int i = 0; i < axis; ++i) outer *= out.dim(i);
  int es = dtype_size(out.dtype());
  int64_t out_row = out.size() / std::max<int64_t>(outer, 1) * es;
  int64_t offset = 0;
  for (const Tensor *t : in) {
    int64_t row = t->size() / std::max<int64_t>(outer, 1) * es;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(out.raw() + o * out_row + offset, t->raw() + o * row, row);
    }
    offset += row;
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

Outputs pad(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  std::vector<int64_t> pads = in[1]->to_int_vector();
  std::string mode = node.attrs.get_string("mode", "constant");
  Tensor out(x.dtype(), node.outputs[0]->shape);
  int rank = x.rank();
  int es = dtype_size(x.dtype());
  // The constant, as bytes of the element type.
  Tensor value(x.dtype(), {});
  if (in.size() > 2 && in[2] && in[2]->size() > 0) value = in[2]->reshaped({});
  std::vector<int64_t> in_stride(rank, 1);
  for (int i = rank - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * x.dim(i + 1);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t n = 0; n < out.size(); ++n) {
    int64_t off = 0;
    bool outside = false;
    for (int i = 0; i < rank; ++i) {
      int64_t s = idx[i] - pads[i], len = x.dim(i);
      if (s < 0 || s >= len) {
        if (mode == "edge") {
          s = s < 0 ? 0 : len - 1;
        } else if (mode == "reflect") {
          if (len == 1) {
            s = 0;
          } else {
            int64_t period = 2 * (len - 1);
            s = ((s % period) + period) % period;
            if (s >= len) s = period - s;
          }
        } else {
          outside = true;
          break;
        }
      }
      off += s * in_stride[i];
    }
    std::memcpy(out.raw() + n * es, outside ? value.raw() : x.raw() + off * es, es);
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < out.dim(i)) break;
      idx[i] = 0;
    }
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

}  // namespace vacc::graph::kernels
