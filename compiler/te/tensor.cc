#include "vacc/te/tensor.h"

#include <mutex>
#include <unordered_map>

#include "vacc/support/error.h"
#include "vacc/tir/functor.h"

namespace vacc::te {
namespace {

// Which operation produced which buffer, so compute() can find the tensors a body reads.
// Entries are weak: a tensor nobody holds disappears from the registry.
struct Registry {
  std::mutex mu;
  std::unordered_map<const tir::BufferNode *, std::weak_ptr<const OperationNode>> map;
};
Registry &registry() {
  static Registry r;
  return r;
}

void record(const Tensor &t) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().map[t->buffer.get()] = t;
}

class LoadCollector : public tir::Visitor {
 public:
  std::vector<const tir::BufferNode *> buffers;

 protected:
  void visit_Load(const tir::Load *op) override {
    bool seen = false;
    for (auto *b : buffers) seen |= b == op->buffer.get();
    if (!seen) buffers.push_back(op->buffer.get());
    Visitor::visit_Load(op);
  }
};

std::vector<Tensor> find_inputs(const tir::Expr &body, const std::string &name) {
  LoadCollector c;
  c.visit(body);
  std::vector<Tensor> out;
  for (auto *b : c.buffers) {
    Tensor t = tensor_of(b);
    if (!t) fail("compute '{}': reads buffer '{}' that no tensor produces", name, b->name);
    out.push_back(t);
  }
  return out;
}

std::vector<IterVar> make_axes(const std::vector<int64_t> &shape,
                               const std::vector<std::string> &names, const std::string &op) {
  if (!names.empty() && names.size() != shape.size()) {
    fail("compute '{}': {} axis names for a rank-{} shape", op, names.size(), shape.size());
  }
  std::vector<IterVar> axes;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] <= 0) fail("compute '{}': dimension {} has extent {}", op, i, shape[i]);
    axes.push_back(
        make_iter_var(names.empty() ? "i" + std::to_string(i) : names[i], shape[i], false));
  }
  return axes;
}

std::vector<tir::Var> vars_of(const std::vector<IterVar> &ivs) {
  std::vector<tir::Var> v;
  for (const IterVar &iv : ivs) v.push_back(iv->var);
  return v;
}

}  // namespace

IterVar make_iter_var(const std::string &name, int64_t extent, bool reduce) {
  auto iv = std::make_shared<IterVarNode>();
  iv->var = tir::make_var(name);
  iv->extent = extent;
  iv->reduce = reduce;
  return iv;
}

tir::Expr OperationNode::operator()(std::vector<tir::Expr> indices) const {
  if (indices.size() != buffer->shape.size()) {
    fail("tensor '{}' has rank {} but is read with {} indices", name, buffer->shape.size(),
         indices.size());
  }
  return tir::load(buffer, std::move(indices));
}

Tensor tensor_of(const tir::BufferNode *buffer) {
  std::lock_guard<std::mutex> lock(registry().mu);
  auto it = registry().map.find(buffer);
  return it == registry().map.end() ? nullptr : it->second.lock();
}

Tensor placeholder(const std::string &name, std::vector<int64_t> shape, tir::DataType t) {
  for (int64_t d : shape) {
    if (d <= 0) fail("placeholder '{}': dimension of extent {}", name, d);
  }
  auto op = std::make_shared<OperationNode>();
  op->name = name;
  op->buffer = tir::make_buffer(name, t, std::move(shape));
  op->placeholder = true;
  op->axes = make_axes(op->buffer->shape, {}, name);
  record(op);
  return op;
}

Tensor make_compute(const std::string &name, tir::Buffer buffer, std::vector<IterVar> axes,
                    std::vector<IterVar> reduce_axes, tir::Expr body) {
  if (body.dtype() != buffer->dtype) {
    fail("compute '{}': body has type {} but the tensor is {}", name, body.dtype().str(),
         buffer->dtype.str());
  }
  auto op = std::make_shared<OperationNode>();
  op->name = name;
  op->buffer = std::move(buffer);
  op->axes = std::move(axes);
  op->reduce_axes = std::move(reduce_axes);
  op->body = std::move(body);
  op->inputs = find_inputs(op->body, name);
  record(op);
  return op;
}

Tensor compute(const std::string &name, std::vector<int64_t> shape, const ComputeFn &fn,
               std::vector<std::string> axis_names) {
  std::vector<IterVar> axes = make_axes(shape, axis_names, name);
  tir::Expr body = fn(vars_of(axes));
  return make_compute(name, tir::make_buffer(name, body.dtype(), shape), axes, {}, body);
}

Tensor reduce_sum(const std::string &name, std::vector<int64_t> shape,
                  std::vector<std::pair<std::string, int64_t>> reduce_axes, const ReduceFn &fn,
                  std::vector<std::string> axis_names) {
  std::vector<IterVar> axes = make_axes(shape, axis_names, name);
  std::vector<IterVar> raxes;
  for (const auto &[n, e] : reduce_axes) {
    if (e <= 0) fail("reduce_sum '{}': reduction axis '{}' has extent {}", name, n, e);
    raxes.push_back(make_iter_var(n, e, true));
  }
  tir::Expr body = fn(vars_of(axes), vars_of(raxes));
  return make_compute(name, tir::make_buffer(name, body.dtype(), shape), axes, raxes, body);
}

Tensor with_body(const Tensor &op, tir::Expr body) {
  return make_compute(op->name, op->buffer, op->axes, op->reduce_axes, std::move(body));
}

}  // namespace vacc::te
