// ONNX's recurrent operators (LSTM, GRU, RNN) imported as the graph operators their equations
// are made of, unrolled over the sequence (static, as every vacc shape is): per direction, one
// Gemm of the whole input sequence by W (its bias and R's folded in), then per time step a Gemm
// of the hidden state by R, the gates (Gather of their columns, Sigmoid, Tanh, Relu) and the
// state updates (Mul, Add, Sub), and Y, Y_h, Y_c assembled by Reshape and Concat. The passes
// and backends then handle them as any such operators (tested: the reference executor, the LLVM
// CPU backend, int8 on the accelerator; the GPU backend has kernels for them but no GPU ran
// them): the int8 quantizer puts the Gemms (the gate products) on the accelerator, the gates
// run where the partitioner puts them.
//
// Supported: every direction, several layers (each its own node, as exporters write them),
// initial_h and initial_c, GRU's linear_before_reset both ways, the activations Sigmoid, Tanh
// and Relu, LSTM's peepholes (P), weights given as initializers or computed (constant folding
// folds their slicing where they are constants), and sequence_lens, constant or given at run
// time: a batch row past its length keeps its state and outputs zeros (Where on a per-step
// mask), and a reversed row runs its own first L steps backwards (its inputs and outputs
// gathered by row; constant lengths fold to constant indices). Refused with a message naming
// the attribute or input: clip, input_forget, layout = 1, activation_alpha/beta.
#pragma once

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "vacc/graph/graph.h"

namespace vacc::graph {

bool is_recurrent_op(const std::string &op_type);

// The node's outputs (Y, Y_h and for LSTM Y_c), named as the node names them, null where it
// leaves one unnamed; `inputs` are the node's (null where omitted). Throws vacc::Error saying
// what is not supported.
std::vector<Value *> import_recurrent(Graph &graph, const onnx::NodeProto &node,
                                      const std::vector<Value *> &inputs);

}  // namespace vacc::graph
