#include "vacc/ops/cpu/executor.h"

#include <cstring>

#include "vacc/codegen/cpu/jit.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/ops/cpu/ops.h"
#include "vacc/support/error.h"
#include "vacc/support/huge_page_buffer.h"

namespace vacc::ops::cpu {

struct NodeKernel::Compiled {
  std::shared_ptr<const codegen::cpu::Kernel> kernel;
  std::vector<HugePageBuffer> constants;  // the kernel's (packed weights: read every run)
};

namespace {

// Every present output is empty: nothing to compute, the reference kernel makes the tensors.
bool has_only_empty_outputs(const graph::Node &node) {
  bool any = false;
  for (const graph::Value *v : node.outputs) {
    if (!v) continue;
    if (graph::num_elements(v->shape) != 0) return false;
    any = true;
  }
  return any;
}

}  // namespace

NodeKernel::NodeKernel(const graph::Node &node, int index) : node_(node) {
  if (is_host_op(node.op) || has_only_empty_outputs(node)) return;
  try {
    CpuKernel k = build_kernel(node);
    compiled_ = std::make_unique<Compiled>();
    compiled_->kernel = codegen::cpu::Jit::global().compile(k.func);
    for (graph::Tensor &c : k.constants) {
      HugePageBuffer &b = compiled_->constants.emplace_back(c.nbytes());
      if (c.nbytes() > 0) std::memcpy(b.data(), c.raw(), c.nbytes());
      c = graph::Tensor();  // one copy at a time: a model's weights may be large
    }
  } catch (const Error &e) {
    std::string what = e.what();
    if (what.find(node.describe()) == std::string::npos) fail("{}: {}", node.describe(index), what);
    throw;
  }
}

NodeKernel::~NodeKernel() = default;

CpuExecutor::CpuExecutor(const graph::Graph &graph) : graph_(graph) {
  std::vector<graph::Node *> nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i)
    steps_.push_back(std::make_unique<NodeKernel>(*nodes[i], static_cast<int>(i)));
}

CpuExecutor::~CpuExecutor() = default;

std::vector<graph::Tensor> NodeKernel::run(const std::vector<const graph::Tensor *> &in) const {
  using graph::Tensor;
  if (!compiled_) return graph::execute_node(node_, in);  // a host operator or empty outputs
  std::vector<Tensor> outs;
  std::vector<void *> args;
  for (const Tensor *t : in)
    if (t) args.push_back(const_cast<uint8_t *>(t->raw()));
  for (HugePageBuffer &c : compiled_->constants) args.push_back(c.data());
  for (const graph::Value *ov : node_.outputs) {
    outs.emplace_back(ov ? Tensor(ov->dtype, ov->shape) : Tensor());
    if (ov) args.push_back(outs.back().raw());
  }
  compiled_->kernel->run(args);
  return outs;
}

namespace {

// A Concat whose inputs the memory plan put in their slices of the output
// (graph/passes/plan_memory.h): their producers wrote the result already.
bool concatenated_in_place(const graph::Node &node, const std::vector<const uint8_t *> &inputs,
                           const std::vector<uint8_t *> &outputs) {
  if (node.op != graph::OpKind::kConcat || outputs.empty() || !outputs[0]) return false;
  int64_t offset = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] != outputs[0] + offset) return false;
    const graph::Value &v = *node.inputs[i];
    offset += graph::num_elements(v.shape) * graph::dtype_size(v.dtype);
  }
  return true;
}

}  // namespace

bool NodeKernel::run(const std::vector<const uint8_t *> &inputs,
                     const std::vector<uint8_t *> &outputs) const {
  if (!compiled_) return false;
  if (concatenated_in_place(node_, inputs, outputs)) return true;
  std::vector<void *> args;
  for (const uint8_t *p : inputs)
    if (p) args.push_back(const_cast<uint8_t *>(p));
  for (HugePageBuffer &c : compiled_->constants) args.push_back(c.data());
  for (uint8_t *p : outputs)
    if (p) args.push_back(p);
  compiled_->kernel->run(args);
  return true;
}

std::vector<graph::Tensor> CpuExecutor::run(const std::vector<graph::Tensor> &inputs) const {
  const graph::ReferenceExecutor walk(
      graph_, [this](size_t i, const graph::Node &, const std::vector<const graph::Tensor *> &in) {
        return steps_[i]->run(in);
      });
  return walk.run(inputs);
}

}  // namespace vacc::ops::cpu
