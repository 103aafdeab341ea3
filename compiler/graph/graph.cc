#include "vacc/graph/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace vacc::graph {

const char *target_name(Target target) {
  return target == Target::kAccel ? "accel" : "cpu";
}

std::string Node::describe(int index) const {
  std::string label = name.empty() ? std::string("<unnamed>") : "'" + name + "'";
  if (index >= 0) return fmt::format("node {} (#{}, {})", label, index, op_name(op));
  return fmt::format("node {} ({})", label, op_name(op));
}

Value *Graph::add_value(const std::string &name, DType dtype, Shape shape) {
  auto value = std::make_unique<Value>();
  value->name = name;
  value->dtype = dtype;
  value->shape = std::move(shape);
  names_.insert(name);
  values_.push_back(std::move(value));
  return values_.back().get();
}

Value *Graph::add_constant(const std::string &name, Tensor tensor) {
  Value *value = add_value(name, tensor.dtype(), tensor.shape());
  value->constant = std::make_shared<const Tensor>(std::move(tensor));
  return value;
}

Node *Graph::add_node(OpKind op, const std::string &name, std::vector<Value *> inputs,
                      std::vector<Value *> outputs, Attributes attrs) {
  auto node = std::make_unique<Node>();
  node->op = op;
  node->name = name;
  node->inputs = std::move(inputs);
  node->outputs = std::move(outputs);
  node->attrs = std::move(attrs);
  for (Value *out : node->outputs) {
    if (out) out->producer = node.get();
  }
  nodes_.push_back(std::move(node));
  return nodes_.back().get();
}

void Graph::remove_node(Node *node) {
  for (Value *out : node->outputs) {
    if (out && out->producer == node) out->producer = nullptr;
  }
  auto it = std::find_if(nodes_.begin(), nodes_.end(),
                         [&](const std::unique_ptr<Node> &n) { return n.get() == node; });
  VACC_CHECK(it != nodes_.end()) << "remove_node: node not in graph";
  nodes_.erase(it);
}

std::vector<Node *> Graph::nodes() const {
  std::vector<Node *> out;
  out.reserve(nodes_.size());
  for (const auto &n : nodes_) out.push_back(n.get());
  return out;
}

int Graph::index_of(const Node *node) const {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].get() == node) return static_cast<int>(i);
  }
  return -1;
}

std::vector<Node *> Graph::consumers(const Value *value) const {
  std::vector<Node *> out;
  for (const auto &n : nodes_) {
    if (std::find(n->inputs.begin(), n->inputs.end(), value) != n->inputs.end()) {
      out.push_back(n.get());
    }
  }
  return out;
}

bool Graph::is_output(const Value *value) const {
  return std::find(outputs_.begin(), outputs_.end(), value) != outputs_.end();
}

void Graph::replace_all_uses(Value *from, Value *to) {
  for (const auto &n : nodes_) {
    for (Value *&in : n->inputs) {
      if (in == from) in = to;
    }
  }
  for (Value *&out : outputs_) {
    if (out == from) out = to;
  }
}

void Graph::sort_topologically() {
  std::unordered_set<const Value *> ready;
  for (const auto &v : values_) {
    if (!v->producer) ready.insert(v.get());
  }
  std::vector<std::unique_ptr<Node>> pending = std::move(nodes_);
  nodes_.clear();
  while (!pending.empty()) {
    bool progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      bool ok = std::all_of((*it)->inputs.begin(), (*it)->inputs.end(),
                            [&](const Value *in) { return !in || ready.count(in); });
      if (ok) {
        for (Value *out : (*it)->outputs) {
          if (out) ready.insert(out);
        }
        nodes_.push_back(std::move(*it));
        it = pending.erase(it);
        progress = true;
      } else {
        ++it;
      }
    }
    VACC_CHECK(progress) << "sort_topologically: the graph has a cycle";
  }
}

void Graph::remove_dead_nodes() {
  // Liveness by a worklist from the graph outputs through producers: independent of the
  // order of the node list (passes append nodes before sorting).
  std::unordered_set<const Value *> live(outputs_.begin(), outputs_.end());
  std::unordered_set<const Node *> live_nodes;
  std::vector<const Value *> work(outputs_.begin(), outputs_.end());
  while (!work.empty()) {
    const Value *v = work.back();
    work.pop_back();
    const Node *p = v->producer;
    if (!p || !live_nodes.insert(p).second) continue;
    for (const Value *in : p->inputs) {
      if (in && live.insert(in).second) work.push_back(in);
    }
  }
  std::vector<std::unique_ptr<Node>> kept;
  for (auto &n : nodes_) {
    if (live_nodes.count(n.get())) kept.push_back(std::move(n));
  }
  nodes_ = std::move(kept);
  for (Value *in : inputs_) live.insert(in);
  // Values no longer referenced (outputs of removed nodes, dropped constants) are freed.
  std::unordered_set<const Value *> referenced(live);
  for (const auto &n : nodes_) {
    for (Value *out : n->outputs) {
      if (out) referenced.insert(out);
    }
  }
  std::vector<std::unique_ptr<Value>> values;
  for (auto &v : values_) {
    if (referenced.count(v.get())) {
      values.push_back(std::move(v));
    } else {
      names_.erase(v->name);
    }
  }
  values_ = std::move(values);
}

std::string Graph::unique_name(const std::string &base) {
  if (!names_.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string name = fmt::format("{}_{}", base, i);
    if (!names_.count(name)) return name;
  }
}

void Graph::verify() const {
  std::unordered_set<const Value *> owned;
  for (const auto &v : values_) owned.insert(v.get());
  std::unordered_set<const Value *> defined;
  for (const auto &v : values_) {
    if (!v->producer) defined.insert(v.get());
  }
  for (const auto &n : nodes_) {
    for (const Value *in : n->inputs) {
      if (!in) continue;
      VACC_CHECK(owned.count(in)) << n->describe() << ": input not owned by the graph";
      VACC_CHECK(defined.count(in))
          << n->describe() << ": input '" << in->name << "' used before it is defined";
    }
    for (const Value *out : n->outputs) {
      if (!out) continue;
      VACC_CHECK(out->producer == n.get()) << n->describe() << ": output producer mismatch";
      defined.insert(out);
    }
  }
  for (const Value *out : outputs_) {
    VACC_CHECK(owned.count(out)) << "graph output '" << out->name << "' not owned";
  }
}

}  // namespace vacc::graph
