// The operators of the graph IR, as an enum that passes and backends switch on. What each
// operator is (its name, ONNX import, shape inference, reference kernel, quantization rule)
// is declared in the operator registry (op_registry.h; each family's def*.cc). ONNX operators
// keep their ONNX names; vacc's own operators (made by the passes: quantized and fused
// kernels, layout transforms) live in the "vacc" domain.
#pragma once

// Each family lists its operators in its folder (compiler/ops/<family>/kinds.h).
#include "../../../../ops/activation/kinds.h"
#include "../../../../ops/compare/kinds.h"
#include "../../../../ops/conv/kinds.h"
#include "../../../../ops/elementwise/kinds.h"
#include "../../../../ops/indexing/kinds.h"
#include "../../../../ops/layout/kinds.h"
#include "../../../../ops/math/kinds.h"
#include "../../../../ops/matmul/kinds.h"
#include "../../../../ops/normalization/kinds.h"
#include "../../../../ops/pool/kinds.h"
#include "../../../../ops/quantize/kinds.h"
#include "../../../../ops/rearrange/kinds.h"
#include "../../../../ops/reduce/kinds.h"
#include "../../../../ops/resize/kinds.h"
#include "../../../../ops/shape/kinds.h"

namespace vacc::graph {

#define VACC_GRAPH_OPS(X) \
  VACC_OPS_ACTIVATION(X) \
  VACC_OPS_COMPARE(X) \
  VACC_OPS_CONV(X) \
  VACC_OPS_ELEMENTWISE(X) \
  VACC_OPS_INDEXING(X) \
  VACC_OPS_LAYOUT(X) \
  VACC_OPS_MATH(X) \
  VACC_OPS_MATMUL(X) \
  VACC_OPS_NORMALIZATION(X) \
  VACC_OPS_POOL(X) \
  VACC_OPS_QUANTIZE(X) \
  VACC_OPS_REARRANGE(X) \
  VACC_OPS_REDUCE(X) \
  VACC_OPS_RESIZE(X) \
  VACC_OPS_SHAPE(X)

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
