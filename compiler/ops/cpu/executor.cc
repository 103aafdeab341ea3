#include "vacc/ops/cpu/executor.h"

#include "vacc/codegen/cpu/jit.h"
#include "vacc/graph/executor.h"
#include "vacc/ops/cpu/ops.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {

struct NodeKernel::Compiled {
  std::shared_ptr<const codegen::cpu::Kernel> kernel;
  std::vector<graph::Tensor> constants;
};

NodeKernel::NodeKernel(const graph::Node &node, int index) : node_(node) {
  if (is_host_op(node.op)) return;
  try {
    CpuKernel k = build_kernel(node);
    compiled_ = std::make_unique<Compiled>();
    compiled_->kernel = codegen::cpu::Jit::global().compile(k.func);
    compiled_->constants = std::move(k.constants);
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

namespace {

std::vector<graph::Tensor> run_host_op(const graph::Node &node,
                                       const std::vector<const graph::Tensor *> &in) {
  using graph::OpKind;
  std::vector<graph::Tensor> outs;
  switch (node.op) {
    case OpKind::kConstant:
      outs.push_back(node.attrs.get_tensor("value"));
      break;
    case OpKind::kIdentity:
      outs.push_back(*in[0]);
      break;
    case OpKind::kFlatten:
    case OpKind::kReshape:
      outs.push_back(in[0]->reshaped(node.outputs[0]->shape));
      break;
    case OpKind::kDropout: {
      bool training = in.size() > 2 && in[2] && in[2]->as_int(0) != 0;
      double ratio = in.size() > 1 && in[1] ? in[1]->as_double(0) : 0.5;
      if (training && ratio != 0.0) {
        fail("Dropout in training mode drops random elements; vacc runs inference only");
      }
      outs.push_back(*in[0]);
      graph::Tensor mask(graph::DType::kBool, in[0]->shape());
      std::fill(mask.raw(), mask.raw() + mask.nbytes(), uint8_t{1});
      outs.push_back(std::move(mask));
      break;
    }
    default:
      VACC_CHECK(false) << "not a host op: " << graph::op_name(node.op);
  }
  return outs;
}

}  // namespace

std::vector<graph::Tensor> NodeKernel::run(const std::vector<const graph::Tensor *> &in) const {
  using graph::Tensor;
  if (!compiled_) return run_host_op(node_, in);
  std::vector<Tensor> outs;
  std::vector<void *> args;
  for (const Tensor *t : in)
    if (t) args.push_back(const_cast<uint8_t *>(t->raw()));
  for (const Tensor &c : compiled_->constants) args.push_back(const_cast<uint8_t *>(c.raw()));
  for (const graph::Value *ov : node_.outputs) {
    outs.emplace_back(ov ? Tensor(ov->dtype, ov->shape) : Tensor());
    if (ov) args.push_back(outs.back().raw());
  }
  compiled_->kernel->run(args);
  return outs;
}

bool NodeKernel::run(const std::vector<const uint8_t *> &inputs,
                     const std::vector<uint8_t *> &outputs) const {
  if (!compiled_) return false;
  std::vector<void *> args;
  for (const uint8_t *p : inputs)
    if (p) args.push_back(const_cast<uint8_t *>(p));
  for (const graph::Tensor &c : compiled_->constants)
    args.push_back(const_cast<uint8_t *>(c.raw()));
  for (uint8_t *p : outputs)
    if (p) args.push_back(p);
  compiled_->kernel->run(args);
  return true;
}

std::vector<graph::Tensor> CpuExecutor::run(const std::vector<graph::Tensor> &inputs) const {
  const graph::Executor walk(
      graph_, [this](size_t i, const graph::Node &, const std::vector<const graph::Tensor *> &in) {
        return steps_[i]->run(in);
      });
  return walk.run(inputs);
}

}  // namespace vacc::ops::cpu
