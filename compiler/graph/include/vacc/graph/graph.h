// The graph IR: a dataflow graph of Nodes (an operator with attributes) connected by Values
// (typed, statically shaped tensors). Values have identity: passes compare pointers, and
// names exist for diagnostics and printing only. The Graph owns every Node and Value; its
// node list is kept in topological order (sort_topologically() restores it after a pass
// inserts nodes out of order).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "vacc/graph/attribute.h"
#include "vacc/graph/op_kind.h"
#include "vacc/graph/tensor.h"

namespace vacc::graph {

struct Node;

// Where a node runs after partitioning.
enum class Target : uint8_t { kCpu, kAccel };
const char *target_name(Target target);

// Memory layout of a value. Plain is ONNX's row-major NC... layout. Blocked is NCHWnc:
// shape [N/bn, C/bc, H, W, bn, bc] for activations (see passes/pack_layout.h).
struct Layout {
  bool blocked = false;
  int block_n = 1;
  int block_c = 1;
  bool operator==(const Layout &other) const = default;
};

struct Value {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  Node *producer = nullptr;                // null for graph inputs and constants
  std::shared_ptr<const Tensor> constant;  // set for constants (initializers, folded values)
  // Quantized values hold q with real value (q - zero_point) * 2^-frac_bits
  // (docs/quantization.md): zero_point is 0 but for a Relu's output stored as unsigned levels
  // (-128: real 0 is code -128).
  std::optional<int> frac_bits;
  int zero_point = 0;
  Layout layout;

  bool is_constant() const { return constant != nullptr; }
  int rank() const { return static_cast<int>(shape.size()); }
};

struct Node {
  OpKind op;
  std::string name;
  std::vector<Value *> inputs;   // nullptr where an optional input is absent
  std::vector<Value *> outputs;  // nullptr where an optional output is absent
  Attributes attrs;
  Target target = Target::kCpu;
  // GEMM operators: the model's own multiply-accumulates, before pack_layout pads channels to
  // the GEMM blocks (graph/macs.h); unset where the node was never packed.
  std::optional<int64_t> model_macs;

  Value *input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  // "'conv1' (#3, Conv)": how diagnostics name a node.
  std::string describe(int index = -1) const;
};

class Graph {
 public:
  std::string name;
  int opset = 17;
  std::map<std::string, std::string> metadata;  // the model's metadata_props

  Graph() = default;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  Graph(Graph &&) = default;
  Graph &operator=(Graph &&) = default;

  // Creates a value owned by the graph (not yet an input, output or node result).
  Value *add_value(const std::string &name, DType dtype, Shape shape);
  // Creates a constant value holding `tensor`.
  Value *add_constant(const std::string &name, Tensor tensor);
  // Appends a node; sets each output's producer. Shapes are not inferred here.
  Node *add_node(OpKind op, const std::string &name, std::vector<Value *> inputs,
                 std::vector<Value *> outputs, Attributes attrs = {});
  // Removes a node (its outputs lose their producer).
  void remove_node(Node *node);

  void add_input(Value *value) { inputs_.push_back(value); }
  void add_output(Value *value) { outputs_.push_back(value); }
  void set_output(size_t i, Value *value) { outputs_.at(i) = value; }

  const std::vector<Value *> &inputs() const { return inputs_; }
  const std::vector<Value *> &outputs() const { return outputs_; }
  std::vector<Node *> nodes() const;
  size_t num_nodes() const { return nodes_.size(); }
  int index_of(const Node *node) const;

  // Every node reading `value`, in node order.
  std::vector<Node *> consumers(const Value *value) const;
  bool is_output(const Value *value) const;
  // Replaces every use of `from` (node inputs and graph outputs) by `to`.
  void replace_all_uses(Value *from, Value *to);

  // Orders nodes so that each comes after the producers of its inputs (stable).
  void sort_topologically();
  // Removes nodes none of whose outputs reach a graph output, and unreferenced values.
  void remove_dead_nodes();
  // A name not used by any value of the graph, made from `base`.
  std::string unique_name(const std::string &base);

  // Checks the structural invariants (producers, topological order, inputs defined);
  // a failure is a bug in a pass: VACC_CHECK.
  void verify() const;

 private:
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value *> inputs_;
  std::vector<Value *> outputs_;
  std::unordered_set<std::string> names_;
};

// Deterministic text form: one line per node, values named by their (made unique) names.
std::string print_graph(const Graph &graph);

}  // namespace vacc::graph
