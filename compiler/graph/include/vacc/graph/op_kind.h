// The operators of the graph IR. One X-macro list drives the enum, the names and the ONNX
// mapping. ONNX operators keep their ONNX names; vacc's own operators (made by the passes:
// quantized and fused kernels, layout transforms) live in the "vacc" domain.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vacc::graph {

// X(Enum, "name", onnx): onnx is true for operators that the ONNX importer accepts.
#define VACC_GRAPH_OPS(X)                           \
  X(Conv, "Conv", true)                             \
  X(ConvTranspose, "ConvTranspose", true)           \
  X(Gemm, "Gemm", true)                             \
  X(MatMul, "MatMul", true)                         \
  X(Relu, "Relu", true)                             \
  X(Clip, "Clip", true)                             \
  X(LeakyRelu, "LeakyRelu", true)                   \
  X(Sigmoid, "Sigmoid", true)                       \
  X(Add, "Add", true)                               \
  X(Sub, "Sub", true)                               \
  X(Mul, "Mul", true)                               \
  X(Div, "Div", true)                               \
  X(BatchNormalization, "BatchNormalization", true) \
  X(MaxPool, "MaxPool", true)                       \
  X(AveragePool, "AveragePool", true)               \
  X(GlobalAveragePool, "GlobalAveragePool", true)   \
  X(Flatten, "Flatten", true)                       \
  X(Reshape, "Reshape", true)                       \
  X(Transpose, "Transpose", true)                   \
  X(Concat, "Concat", true)                         \
  X(Softmax, "Softmax", true)                       \
  X(Pad, "Pad", true)                               \
  X(Constant, "Constant", true)                     \
  X(Identity, "Identity", true)                     \
  X(Dropout, "Dropout", true)                       \
  X(QuantizeLinear, "QuantizeLinear", true)         \
  X(DequantizeLinear, "DequantizeLinear", true)     \
  X(QLinearConv, "QLinearConv", true)               \
  X(QLinearMatMul, "QLinearMatMul", true)           \
  X(ConvInteger, "ConvInteger", true)               \
  X(MatMulInteger, "MatMulInteger", true)           \
  X(Requantize, "vacc.Requantize", false)           \
  X(QConv, "vacc.QConv", false)                     \
  X(QDense, "vacc.QDense", false)                   \
  X(QAdd, "vacc.QAdd", false)                       \
  X(PackNCHWnc, "vacc.PackNCHWnc", false)           \
  X(UnpackNCHWnc, "vacc.UnpackNCHWnc", false)

enum class OpKind {
#define VACC_X(e, name, onnx) k##e,
  VACC_GRAPH_OPS(VACC_X)
#undef VACC_X
};

const char *op_name(OpKind op);
// The operator an ONNX op_type (default domain) maps to, if vacc supports it.
std::optional<OpKind> op_from_onnx(std::string_view op_type);
// Comma-separated list of the supported ONNX operators, for diagnostics.
std::string supported_onnx_ops();

}  // namespace vacc::graph
