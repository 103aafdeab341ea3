// The operator registry: everything the graph level knows about one operator, declared in
// one place (its family's def*.cc in compiler/ops/<family>/) and looked up by the importer,
// shape inference, the reference executor, the quantizer and the MAC count. The backends keep
// their own tables keyed by OpKind, filled by the same families' cpu/gpu/accel parts (indexed in
// compiler/ops/cpu, compiler/ops/gpu and compiler/lower), so that the graph level never links a
// backend. docs/DESIGN.md says how to add an operator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vacc/graph/graph.h"

namespace vacc::graph {

// The default ONNX domain's opsets vacc imports; each operator narrows them (OpDef::opset_min,
// opset_max) to the versions whose semantics it implements.
inline constexpr int kMinOpset = 1;
inline constexpr int kMaxOpset = 17;

// What the importer hands an operator's import hook: the graph being built, the model's
// default-domain opset and the node's name.
struct ImportContext {
  Graph &graph;
  int opset;
  const std::string &node_name;
  // A new constant input for the node (an older opset's attribute turned into an input).
  Value *constant(const char *role, Tensor t) const;
};

// How the int8 quantizer (passes/quantize.h) treats an operator whose float input it has
// quantized. Anything but kNone reads int8 and writes int8 with the fraction bits the rule
// gives; kNone dequantizes the operator's quantized inputs back to float.
enum class QuantRule : uint8_t {
  kNone,         // stays float
  kPassThrough,  // same op on int8, same fraction bits as input 0 (Relu, MaxPool, reshapes)
  kConv,         // ConvInteger + bias + Requantize, per-channel weights
  kDense,        // MatMulInteger + bias + Requantize, per-channel weights
  kAdd,          // vacc.QAdd of two quantized operands of the same shape
  kAvgPool,      // vacc.QAveragePool (AveragePool, GlobalAveragePool) of a 2-D quantized input
};

// How the CPU's blocked-layout pass (passes/block_cpu_layout.h) converts an operator reading a
// blocked (NCHWc) value; kNone unblocks its inputs first.
enum class CpuBlocking : uint8_t {
  kNone,
  kConv,       // vacc.ConvNCHWc
  kBatchNorm,  // vacc.ConvNCHWc, depthwise 1x1 (its per-channel affine)
  kPool,       // the same 2-D pool on the blocked tensor
  kUnary,      // element by element, its other operands scalar constants
  kBinary,     // two blocked operands of one shape, or one per channel of the other
  kConcat,     // along the channels, every part but the last whole blocks
};

// How pack_layout (passes/pack_layout.h) blocks the operands of an accelerator node of the
// operator, as its accelerator part (compiler/ops/<family>/accel.cc) reads them; kNone: the
// operator never runs on the accelerator.
enum class AccelOperands : uint8_t {
  kNone,
  kGemm,          // data by block_in, weight blocked (bo, bi), bias padded, a skip as the output
  kGroupedGemm,   // kGemm with a grouped weight sliced into whole channel blocks (convolutions)
  kOutputBlocks,  // both data operands blocked as the output is (by block_out)
  kWindow,        // the input blocked as the output is (an identity GEMM between them)
};

using KernelInputs = std::vector<const Tensor *>;

struct OpDef {
  OpKind op;
  // ONNX's op_type for ONNX operators; "vacc.<Name>" for vacc's own (made by the passes).
  const char *name = nullptr;
  // The importer accepts the operator (default ONNX domain)...
  bool onnx = false;
  // ...in models whose default-domain opset is within [opset_min, opset_max]: from the opset
  // that introduced the operator (or the oldest form vacc implements) to the newest one whose
  // semantics vacc implements.
  int opset_min = kMinOpset;
  int opset_max = kMaxOpset;
  // Import: rewrites an older opset's form into the one the rest of vacc implements (e.g.
  // attributes that became inputs), or rejects a form vacc does not run. Errors carry only
  // the reason; the importer names the node.
  void (*import)(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) = nullptr;
  // Shape and dtype inference: sets every present output's dtype and shape (and layout)
  // from the inputs and attributes; a mismatch is a vacc::Error with the reason.
  void (*infer)(Node &node) = nullptr;
  // The float/integer reference kernel on the host (the graph executor, constant folding,
  // and the CPU backend's host operators): one tensor per node output.
  std::vector<Tensor> (*reference)(const Node &node, const KernelInputs &in) = nullptr;
  // The quantizer's rule.
  QuantRule quantize = QuantRule::kNone;
  // Multiply-accumulates of one run (GEMM operators; graph/macs.h); null counts 0.
  int64_t (*macs)(const Node &node) = nullptr;
  // The reference kernel reads only its inputs' static shapes (Shape), so the importer
  // folds the node whatever its inputs.
  bool reads_shapes_only = false;
  // Every output element is one of input 0's elements, picked by position or by order
  // (reshapes, transposes, max pooling): the operator computes the same on a quantized
  // tensor's int8 codes as on its values (passes/quantize_qdq.h runs it on the codes).
  bool selects_elements = false;
  // The CPU's blocked layout, and when set, the condition under which the node converts.
  CpuBlocking cpu_blocking = CpuBlocking::kNone;
  bool (*cpu_blocking_applies)(const Node &node) = nullptr;
  // The accelerator's operand blocking.
  AccelOperands accel_operands = AccelOperands::kNone;
};

// The definition of `op`. Every OpKind has one.
const OpDef &op_def(OpKind op);
// Every definition, in OpKind order.
const std::vector<OpDef> &all_op_defs();
// The operator an ONNX op_type (default domain) maps to, if vacc imports it.
std::optional<OpKind> op_from_onnx(std::string_view op_type);
// The operator named `name` (ONNX or vacc domain, as op_name() spells it).
std::optional<OpKind> op_from_name(std::string_view name);
// Comma-separated list of the importable ONNX operators, for diagnostics.
std::string supported_onnx_ops();

}  // namespace vacc::graph
