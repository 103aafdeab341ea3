// The deterministic text form of a graph, for tests (before/expected) and --dump-ir.
#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "vacc/graph/graph.h"

namespace vacc::graph {

namespace {
class Namer {
 public:
  // Display names are the values' names, made unique by a suffix where they collide.
  const std::string &name(const Value *v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string base = v->name.empty() ? std::string("v") : v->name;
    std::string candidate = base;
    for (int i = 1; used_.count(candidate); ++i) candidate = fmt::format("{}.{}", base, i);
    used_.insert(candidate);
    return names_[v] = candidate;
  }

 private:
  std::unordered_map<const Value *, std::string> names_;
  std::unordered_set<std::string> used_;
};

std::string type_str(const Value *v) {
  std::string s = fmt::format("{}{}", dtype_name(v->dtype), shape_str(v->shape));
  if (v->frac_bits) s += fmt::format(" q{}", *v->frac_bits);
  if (v->zero_point) s += fmt::format(" zp{}", v->zero_point);
  if (v->layout.blocked) s += fmt::format(" NCHW{}n{}c", v->layout.block_n, v->layout.block_c);
  return s;
}
}  // namespace

std::string print_graph(const Graph &graph) {
  Namer namer;
  std::string out = fmt::format("graph {} (", graph.name);
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value *v = graph.inputs()[i];
    out += fmt::format("{}%{}: {}", i ? ", " : "", namer.name(v), type_str(v));
  }
  out += ") {\n";
  std::unordered_set<const Value *> printed;
  for (const Node *n : graph.nodes()) {
    for (const Value *in : n->inputs) {
      if (in && in->is_constant() && !printed.count(in)) {
        printed.insert(in);
        out += fmt::format("  %{}: {} = constant\n", namer.name(in), type_str(in));
      }
    }
  }
  for (const Node *n : graph.nodes()) {
    std::string outs;
    for (const Value *v : n->outputs) {
      if (!outs.empty()) outs += ", ";
      outs += v ? fmt::format("%{}: {}", namer.name(v), type_str(v)) : std::string("_");
    }
    std::string attrs;
    for (const auto &[key, value] : n->attrs.all()) {
      attrs += fmt::format("{}{}={}", attrs.empty() ? "" : ", ", key, attribute_str(value));
    }
    std::string ins;
    for (const Value *v : n->inputs) {
      if (!ins.empty()) ins += ", ";
      ins += v ? "%" + namer.name(v) : std::string("_");
    }
    out += fmt::format("  {} = {}{}({}){}\n", outs, op_name(n->op),
                       attrs.empty() ? "" : "[" + attrs + "]", ins,
                       n->target == Target::kAccel ? " @accel" : "");
  }
  std::string outs;
  for (const Value *v : graph.outputs()) {
    outs += fmt::format("{}%{}", outs.empty() ? "" : ", ", namer.name(v));
  }
  out += fmt::format("  return {}\n}}\n", outs);
  return out;
}

}  // namespace vacc::graph
