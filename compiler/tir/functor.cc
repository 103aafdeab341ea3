#include "vacc/tir/functor.h"

#include <unordered_map>

#include "vacc/support/error.h"

namespace vacc::tir {

// ------------------------------------------------------------------------------- visitor

void Visitor::visit(const Expr &e) {
  switch (e.kind()) {
#define VACC_X(name, ...) \
  case ExprKind::k##name: \
    return visit_##name(static_cast<const nodes::name *>(e.get()));
    VACC_TIR_BINARY_NODES(VACC_X) VACC_TIR_OTHER_EXPR_NODES(VACC_X)
#undef VACC_X
  }
}

void Visitor::visit(const Stmt &s) {
  switch (s.kind()) {
#define VACC_X(name)      \
  case StmtKind::k##name: \
    return visit_##name(static_cast<const nodes::name *>(s.get()));
    VACC_TIR_STMT_NODES(VACC_X)
#undef VACC_X
  }
}

#define VACC_X(name, ...)                             \
  void Visitor::visit_##name(const nodes::name *op) { \
    visit(op->a);                                     \
    visit(op->b);                                     \
  }
VACC_TIR_BINARY_NODES(VACC_X)
#undef VACC_X
void Visitor::visit_IntImm(const IntImm *) {}
void Visitor::visit_FloatImm(const FloatImm *) {}
void Visitor::visit_Call(const Call *op) {
  for (const Expr &a : op->args) visit(a);
}
void Visitor::visit_Var(const VarNode *) {}
void Visitor::visit_Cast(const Cast *op) {
  visit(op->value);
}
void Visitor::visit_Not(const Not *op) {
  visit(op->a);
}
void Visitor::visit_Select(const Select *op) {
  visit(op->cond);
  visit(op->t);
  visit(op->f);
}
void Visitor::visit_Load(const Load *op) {
  for (const Expr &i : op->indices) visit(i);
}
void Visitor::visit_Store(const Store *op) {
  for (const Expr &i : op->indices) visit(i);
  visit(op->value);
}
void Visitor::visit_Prefetch(const Prefetch *op) {
  for (const Expr &i : op->indices) visit(i);
}
void Visitor::visit_For(const For *op) {
  visit(op->body);
}
void Visitor::visit_IfThenElse(const IfThenElse *op) {
  visit(op->cond);
  visit(op->then_case);
  if (op->else_case.defined()) visit(op->else_case);
}
void Visitor::visit_Seq(const Seq *op) {
  for (const Stmt &s : op->stmts) visit(s);
}
void Visitor::visit_Allocate(const Allocate *op) {
  visit(op->body);
}
void Visitor::visit_Attr(const Attr *op) {
  visit(op->body);
}
void Visitor::visit_Dma(const Dma *op) {
  for (const Expr *e : {&op->sram_index, &op->dram_index, &op->y_size, &op->x_size, &op->x_stride,
                        &op->pad_top, &op->pad_bottom, &op->pad_left, &op->pad_right}) {
    visit(*e);
  }
}
void Visitor::visit_Gemm(const Gemm *op) {
  visit(op->acc_index);
  if (!op->reset) {
    visit(op->inp_index);
    visit(op->wgt_index);
  }
}
void Visitor::visit_Alu(const Alu *op) {
  visit(op->dst_index);
  if (!op->use_imm) visit(op->src_index);
}
void Visitor::visit_DepPush(const DepPush *) {}
void Visitor::visit_DepPop(const DepPop *) {}

// ------------------------------------------------------------------------------- mutator

Expr Mutator::mutate(const Expr &e) {
  switch (e.kind()) {
#define VACC_X(name, ...) \
  case ExprKind::k##name: \
    return mutate_##name(static_cast<const nodes::name *>(e.get()), e);
    VACC_TIR_BINARY_NODES(VACC_X) VACC_TIR_OTHER_EXPR_NODES(VACC_X)
#undef VACC_X
  }
  return e;
}

Stmt Mutator::mutate(const Stmt &s) {
  switch (s.kind()) {
#define VACC_X(name)      \
  case StmtKind::k##name: \
    return mutate_##name(static_cast<const nodes::name *>(s.get()), s);
    VACC_TIR_STMT_NODES(VACC_X)
#undef VACC_X
  }
  return s;
}

bool Mutator::mutate_list(const std::vector<Expr> &in, std::vector<Expr> *out) {
  bool changed = false;
  out->clear();
  for (const Expr &e : in) {
    out->push_back(mutate(e));
    changed |= !out->back().same_as(e);
  }
  return changed;
}

#define VACC_X(name, ...)                                                \
  Expr Mutator::mutate_##name(const nodes::name *op, const Expr &self) { \
    Expr a = mutate(op->a), b = mutate(op->b);                           \
    if (a.same_as(op->a) && b.same_as(op->b)) return self;               \
    return nodes::name::make(a, b);                                      \
  }
VACC_TIR_BINARY_NODES(VACC_X)
#undef VACC_X
Expr Mutator::mutate_IntImm(const IntImm *, const Expr &self) {
  return self;
}
Expr Mutator::mutate_FloatImm(const FloatImm *, const Expr &self) {
  return self;
}
Expr Mutator::mutate_Call(const Call *op, const Expr &self) {
  std::vector<Expr> args;
  if (!mutate_list(op->args, &args)) return self;
  return Call::make(op->op, args);
}
Expr Mutator::mutate_Var(const VarNode *, const Expr &self) {
  return self;
}
Expr Mutator::mutate_Cast(const Cast *op, const Expr &self) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? self : Cast::make(op->dtype, v);
}
Expr Mutator::mutate_Not(const Not *op, const Expr &self) {
  Expr v = mutate(op->a);
  return v.same_as(op->a) ? self : Not::make(v);
}
Expr Mutator::mutate_Select(const Select *op, const Expr &self) {
  Expr c = mutate(op->cond), t = mutate(op->t), f = mutate(op->f);
  if (c.same_as(op->cond) && t.same_as(op->t) && f.same_as(op->f)) return self;
  return Select::make(c, t, f);
}
Expr Mutator::mutate_Load(const Load *op, const Expr &self) {
  std::vector<Expr> idx;
  if (!mutate_list(op->indices, &idx)) return self;
  return Load::make(op->buffer, idx);
}

Stmt Mutator::mutate_Store(const Store *op, const Stmt &self) {
  std::vector<Expr> idx;
  bool changed = mutate_list(op->indices, &idx);
  Expr v = mutate(op->value);
  if (!changed && v.same_as(op->value)) return self;
  return Store::make(op->buffer, idx, v);
}
Stmt Mutator::mutate_Prefetch(const Prefetch *op, const Stmt &self) {
  std::vector<Expr> idx;
  return mutate_list(op->indices, &idx) ? Prefetch::make(op->buffer, idx) : self;
}
Stmt Mutator::mutate_For(const For *op, const Stmt &self) {
  Stmt b = mutate(op->body);
  return b.same_as(op->body) ? self : For::make(op->var, op->extent, op->for_kind, b);
}
Stmt Mutator::mutate_IfThenElse(const IfThenElse *op, const Stmt &self) {
  Expr c = mutate(op->cond);
  Stmt t = mutate(op->then_case);
  Stmt e = op->else_case.defined() ? mutate(op->else_case) : Stmt();
  if (c.same_as(op->cond) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
  return IfThenElse::make(c, t, e);
}
Stmt Mutator::mutate_Seq(const Seq *op, const Stmt &self) {
  std::vector<Stmt> out;
  bool changed = false;
  for (const Stmt &s : op->stmts) {
    out.push_back(mutate(s));
    changed |= !out.back().same_as(s);
  }
  return changed ? Seq::make(out) : self;
}
Stmt Mutator::mutate_Allocate(const Allocate *op, const Stmt &self) {
  Stmt b = mutate(op->body);
  return b.same_as(op->body) ? self : Allocate::make(op->buffer, b, op->base);
}
Stmt Mutator::mutate_Attr(const Attr *op, const Stmt &self) {
  Stmt b = mutate(op->body);
  return b.same_as(op->body) ? self : Attr::make(op->key, op->value, b);
}
Stmt Mutator::mutate_Dma(const Dma *op, const Stmt &self) {
  Dma n = *op;
  bool changed = false;
  for (Expr Dma::*f :
       {&Dma::sram_index, &Dma::dram_index, &Dma::y_size, &Dma::x_size, &Dma::x_stride,
        &Dma::pad_top, &Dma::pad_bottom, &Dma::pad_left, &Dma::pad_right}) {
    n.*f = mutate(op->*f);
    changed |= !(n.*f).same_as(op->*f);
  }
  return changed ? Dma::make(n) : self;
}
Stmt Mutator::mutate_Gemm(const Gemm *op, const Stmt &self) {
  Gemm n = *op;
  n.acc_index = mutate(op->acc_index);
  bool changed = !n.acc_index.same_as(op->acc_index);
  if (!op->reset) {
    n.inp_index = mutate(op->inp_index);
    n.wgt_index = mutate(op->wgt_index);
    changed |= !n.inp_index.same_as(op->inp_index) || !n.wgt_index.same_as(op->wgt_index);
  }
  return changed ? Gemm::make(n) : self;
}
Stmt Mutator::mutate_Alu(const Alu *op, const Stmt &self) {
  Alu n = *op;
  n.dst_index = mutate(op->dst_index);
  bool changed = !n.dst_index.same_as(op->dst_index);
  if (!op->use_imm) {
    n.src_index = mutate(op->src_index);
    changed |= !n.src_index.same_as(op->src_index);
  }
  return changed ? Alu::make(n) : self;
}
Stmt Mutator::mutate_DepPush(const DepPush *, const Stmt &self) {
  return self;
}
Stmt Mutator::mutate_DepPop(const DepPop *, const Stmt &self) {
  return self;
}

// --------------------------------------------------------------------------- utilities

namespace {
class Substituter : public Mutator {
 public:
  explicit Substituter(const std::vector<std::pair<Var, Expr>> &map) {
    for (const auto &[v, e] : map) map_[v.get()] = e;
  }

 protected:
  Expr mutate_Var(const VarNode *op, const Expr &self) override {
    auto it = map_.find(op);
    return it == map_.end() ? self : it->second;
  }

 private:
  std::unordered_map<const VarNode *, Expr> map_;
};

class VarFinder : public Visitor {
 public:
  explicit VarFinder(const VarNode *v) : v_(v) {}
  bool found = false;

 protected:
  void visit_Var(const VarNode *op) override { found |= op == v_; }

 private:
  const VarNode *v_;
};

class BufferSwap : public Mutator {
 public:
  explicit BufferSwap(const std::vector<std::pair<Buffer, Buffer>> &m) {
    for (const auto &[a, b] : m) map_[a.get()] = b;
  }
  using Mutator::mutate;

 protected:
  Buffer swap(const Buffer &b) {
    if (!b) return b;
    auto it = map_.find(b.get());
    return it == map_.end() ? b : it->second;
  }
  Expr mutate_Load(const Load *op, const Expr &self) override {
    std::vector<Expr> idx;
    bool changed = mutate_list(op->indices, &idx);
    Buffer b = swap(op->buffer);
    return changed || b != op->buffer ? Load::make(b, idx) : self;
  }
  Stmt mutate_Store(const Store *op, const Stmt &self) override {
    std::vector<Expr> idx;
    bool changed = mutate_list(op->indices, &idx);
    Expr v = mutate(op->value);
    Buffer b = swap(op->buffer);
    if (!changed && v.same_as(op->value) && b == op->buffer) return self;
    return Store::make(b, idx, v);
  }
  Stmt mutate_Allocate(const Allocate *op, const Stmt &self) override {
    Stmt body = mutate(op->body);
    Buffer b = swap(op->buffer);
    return body.same_as(op->body) && b == op->buffer ? self : Allocate::make(b, body, op->base);
  }
  Stmt mutate_Dma(const Dma *op, const Stmt &self) override {
    Stmt s = Mutator::mutate_Dma(op, self);
    Dma n = *s.as<Dma>();
    n.sram = swap(n.sram);
    n.dram = swap(n.dram);
    if (n.sram == op->sram && n.dram == op->dram) return s;
    return Dma::make(n);
  }
  Stmt mutate_Gemm(const Gemm *op, const Stmt &self) override {
    Stmt s = Mutator::mutate_Gemm(op, self);
    Gemm n = *s.as<Gemm>();
    n.acc = swap(n.acc);
    n.inp = swap(n.inp);
    n.wgt = swap(n.wgt);
    if (n.acc == op->acc && n.inp == op->inp && n.wgt == op->wgt) return s;
    return Gemm::make(n);
  }
  Stmt mutate_Alu(const Alu *op, const Stmt &self) override {
    Stmt s = Mutator::mutate_Alu(op, self);
    Alu n = *s.as<Alu>();
    n.dst = swap(n.dst);
    n.src = swap(n.src);
    if (n.dst == op->dst && n.src == op->src) return s;
    return Alu::make(n);
  }

 private:
  std::unordered_map<const BufferNode *, Buffer> map_;
};

class PredFinder : public Visitor {
 public:
  explicit PredFinder(const std::function<bool(const VarNode *)> &p) : p_(p) {}
  bool found = false;

 protected:
  void visit_Var(const VarNode *op) override { found |= p_(op); }

 private:
  const std::function<bool(const VarNode *)> &p_;
};

class StmtWalker : public Visitor {
 public:
  explicit StmtWalker(const std::function<void(const Stmt &)> &f) : f_(f) {}
  void visit(const Stmt &s) override {
    f_(s);
    Visitor::visit(s);
  }
  using Visitor::visit;

 private:
  const std::function<void(const Stmt &)> &f_;
};
}  // namespace

Expr substitute(const Expr &e, const std::vector<std::pair<Var, Expr>> &map) {
  return Substituter(map).mutate(e);
}
Stmt substitute(const Stmt &s, const std::vector<std::pair<Var, Expr>> &map) {
  return Substituter(map).mutate(s);
}
bool uses_var(const Expr &e, const Var &v) {
  VarFinder f(v.get());
  f.visit(e);
  return f.found;
}
bool uses_var(const Stmt &s, const Var &v) {
  VarFinder f(v.get());
  f.visit(s);
  return f.found;
}
Stmt replace_buffers(const Stmt &s, const std::vector<std::pair<Buffer, Buffer>> &map) {
  return BufferSwap(map).mutate(s);
}
bool uses_var_if(const Expr &e, const std::function<bool(const VarNode *)> &pred) {
  PredFinder f(pred);
  f.visit(e);
  return f.found;
}
void for_each_stmt(const Stmt &s, const std::function<void(const Stmt &)> &f) {
  StmtWalker w(f);
  w.visit(s);
}

}  // namespace vacc::tir
