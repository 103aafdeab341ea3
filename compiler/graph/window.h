// Sliding-window geometry shared by shape inference and the kernels of Conv, ConvTranspose,
// ConvInteger, QLinearConv, MaxPool and AveragePool: ONNX's auto_pad, pads, strides,
// dilations and ceil_mode resolved into explicit per-dimension numbers.
#pragma once

#include <cstdint>
#include <vector>

#include "vacc/graph/attribute.h"
#include "vacc/graph/tensor.h"

namespace vacc::graph {

struct Window {
  int rank = 0;  // number of spatial dimensions
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, out;
};

// For Conv-like ops and pools. `in` and `kernel` are the spatial extents. Throws vacc::Error
// (a reason without the node's name) when the attributes do not fit the shapes.
Window make_window(const Attributes &attrs, const std::vector<int64_t> &in,
                   const std::vector<int64_t> &kernel, bool ceil_mode);

// For ConvTranspose: `out` is the (larger) output extent.
Window make_transpose_window(const Attributes &attrs, const std::vector<int64_t> &in,
                             const std::vector<int64_t> &kernel);

}  // namespace vacc::graph
