// The operators of the graph IR, as an enum that passes and backends switch on. What each
// operator is (its name, ONNX import, shape inference, reference kernel, quantization rule)
// is declared in the operator registry (op_registry.h, compiler/graph/ops/). ONNX operators
// keep their ONNX names; vacc's own operators (made by the passes: quantized and fused
// kernels, layout transforms) live in the "vacc" domain.
#pragma once

namespace vacc::graph {

#define VACC_GRAPH_OPS(X) \
  X(Conv)                 \
  X(ConvTranspose)        \
  X(Gemm)                 \
  X(MatMul)               \
  X(Relu)                 \
  X(Clip)                 \
  X(LeakyRelu)            \
  X(Sigmoid)              \
  X(Add)                  \
  X(Sub)                  \
  X(Mul)                  \
  X(Div)                  \
  X(BatchNormalization)   \
  X(MaxPool)              \
  X(AveragePool)          \
  X(GlobalAveragePool)    \
  X(Flatten)              \
  X(Reshape)              \
  X(Transpose)            \
  X(Concat)               \
  X(Softmax)              \
  X(Pad)                  \
  X(Constant)             \
  X(Identity)             \
  X(Dropout)              \
  X(QuantizeLinear)       \
  X(DequantizeLinear)     \
  X(QLinearConv)          \
  X(QLinearMatMul)        \
  X(ConvInteger)          \
  X(MatMulInteger)        \
  X(Requantize)           \
  X(QConv)                \
  X(QDense)               \
  X(QAdd)                 \
  X(QMatMul)              \
  X(QAveragePool)         \
  X(PackNCHWnc)           \
  X(UnpackNCHWnc)         \
  X(Shape)                \
  X(Squeeze)              \
  X(Unsqueeze)            \
  X(Gather)               \
  X(Slice)                \
  X(ConstantOfShape)      \
  X(Range)                \
  X(Equal)                \
  X(Where)                \
  X(Expand)               \
  X(Cast)                 \
  X(Tanh)                 \
  X(Exp)                  \
  X(Log)                  \
  X(Sqrt)                 \
  X(Erf)                  \
  X(Reciprocal)           \
  X(Floor)                \
  X(Ceil)                 \
  X(Abs)                  \
  X(Neg)                  \
  X(HardSigmoid)          \
  X(HardSwish)            \
  X(Pow)                  \
  X(Sum)                  \
  X(Mean)                 \
  X(Max)                  \
  X(Min)                  \
  X(ConvNCHWc) \
  X(ReduceSum)            \
  X(ReduceMean)           \
  X(ReduceMax)            \
  X(ReduceMin)            \
  X(ReduceProd)           \
  X(ReduceL1)             \
  X(ReduceL2)             \
  X(ReduceLogSum)         \
  X(ReduceLogSumExp)      \
  X(ReduceSumSquare)      \
  X(ArgMax)               \
  X(ArgMin)               \
  X(LayerNormalization)   \
  X(Gelu)                 \
  X(Size)                 \
  X(Greater)              \
  X(Less)                 \
  X(GreaterOrEqual)       \
  X(LessOrEqual)          \
  X(And)                  \
  X(Or)                   \
  X(Xor)                  \
  X(Not)                  \
  X(Elu)                  \
  X(Selu)                 \
  X(Celu)                 \
  X(Softplus)             \
  X(Softsign)             \
  X(ThresholdedRelu)      \
  X(Shrink)               \
  X(Round)                \
  X(Sign)                 \
  X(PRelu)                \
  X(IsNaN)                \
  X(IsInf)                \
  X(Mod)                  \
  X(LogSoftmax)           \
  X(Hardmax)              \
  X(Split)                \
  X(Tile)                 \
  X(DepthToSpace)         \
  X(SpaceToDepth)         \
  X(Trilu)                \
  X(Resize)               \
  X(CumSum)               \
  X(GlobalMaxPool)        \
  X(CastLike)

enum class OpKind {
#define VACC_X(e) k##e,
  VACC_GRAPH_OPS(VACC_X)
#undef VACC_X
};

#define VACC_X(e) +1
inline constexpr int kNumOpKinds = 0 VACC_GRAPH_OPS(VACC_X);
#undef VACC_X

// The operator's name (op_registry.h: OpDef::name).
const char *op_name(OpKind op);

}  // namespace vacc::graph
