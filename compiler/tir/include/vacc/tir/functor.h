// Visitor and mutator over the loop IR, generated from node_kinds.h. A visitor walks every
// child by default; a mutator rebuilds a node only when a child changed and otherwise
// returns the very same node, so "nothing changed" is a pointer comparison.
#pragma once

#include <functional>

#include "vacc/tir/node.h"

namespace vacc::tir {

class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual void visit(const Expr &e);
  virtual void visit(const Stmt &s);

 protected:
#define VACC_X(name, ...) virtual void visit_##name(const nodes::name *op);
  VACC_TIR_BINARY_NODES(VACC_X)
  VACC_TIR_OTHER_EXPR_NODES(VACC_X)
  VACC_TIR_STMT_NODES(VACC_X)
#undef VACC_X
};

class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual Expr mutate(const Expr &e);
  virtual Stmt mutate(const Stmt &s);

 protected:
#define VACC_X(name, ...) virtual Expr mutate_##name(const nodes::name *op, const Expr &self);
  VACC_TIR_BINARY_NODES(VACC_X)
  VACC_TIR_OTHER_EXPR_NODES(VACC_X)
#undef VACC_X
#define VACC_X(name) virtual Stmt mutate_##name(const nodes::name *op, const Stmt &self);
  VACC_TIR_STMT_NODES(VACC_X)
#undef VACC_X
  // Mutates a list; returns true when any element changed.
  bool mutate_list(const std::vector<Expr> &in, std::vector<Expr> *out);
};

// Replaces variables by expressions (keyed by identity).
Expr substitute(const Expr &e, const std::vector<std::pair<Var, Expr>> &map);
Stmt substitute(const Stmt &s, const std::vector<std::pair<Var, Expr>> &map);
// Replaces buffers (keyed by identity) in loads, stores and intrinsics.
Stmt replace_buffers(const Stmt &s, const std::vector<std::pair<Buffer, Buffer>> &map);
// True when e (or s) reads variable v.
bool uses_var(const Expr &e, const Var &v);
bool uses_var(const Stmt &s, const Var &v);
// True when e reads a variable for which pred holds.
bool uses_var_if(const Expr &e, const std::function<bool(const VarNode *)> &pred);
// Calls f on every statement of s in pre-order.
void for_each_stmt(const Stmt &s, const std::function<void(const Stmt &)> &f);

}  // namespace vacc::tir
