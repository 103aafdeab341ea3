#include "vacc/lower/loops/inject_virtual_threads.h"

#include <set>

#include "vacc/support/error.h"
#include "vacc/tir/arith.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/ops.h"

namespace vacc::tir {
namespace {

// The engines a statement's intrinsics run on.
std::set<isa::Engine> engines(const Stmt &s) {
  std::set<isa::Engine> out;
  for_each_stmt(s, [&](const Stmt &x) {
    isa::Engine e;
    if (engine_of(x, &e)) out.insert(e);
  });
  return out;
}

class Expander {
 public:
  Expander(const Var &vt, int64_t n) : vt_(vt), n_(n), maps_(n) {}

  Stmt expand(const Stmt &s) {
    if (const Allocate *a = s.as<Allocate>()) {
      std::vector<Buffer> copies;
      for (int64_t t = 0; t < n_; ++t) {
        const Buffer &b = a->buffer;
        Buffer c = make_buffer(n_ > 1 ? b->name + ".t" + std::to_string(t) : b->name, b->dtype,
                               b->shape, b->scope, static_cast<int>(t));
        maps_[t].emplace_back(b, c);
        copies.push_back(c);
      }
      Stmt body = expand(a->body);
      for (size_t t = copies.size(); t-- > 0;) body = Allocate::make(copies[t], body, a->base);
      return body;
    }
    if (const Seq *q = s.as<Seq>()) {
      std::vector<Stmt> out;
      for (const Stmt &c : q->stmts) out.push_back(expand(c));
      return Seq::make(out);
    }
    if (const For *f = s.as<For>()) {
      if (engines(f->body).size() > 1) {
        return For::make(f->var, f->extent, f->for_kind, expand(f->body));
      }
    }
    if (const Attr *a = s.as<Attr>()) return Attr::make(a->key, a->value, expand(a->body));
    if (const IfThenElse *i = s.as<IfThenElse>()) {
      if (!uses_var(i->cond, vt_)) {
        return IfThenElse::make(i->cond, expand(i->then_case),
                                i->else_case.defined() ? expand(i->else_case) : Stmt());
      }
    }
    std::vector<Stmt> copies;
    for (int64_t t = 0; t < n_; ++t) copies.push_back(copy(s, t));
    return Seq::make(copies);
  }

 private:
  Stmt copy(const Stmt &s, int64_t t) {
    Stmt c = substitute(s, {{vt_, make_const(vt_->dtype, t)}});
    return simplify(replace_buffers(c, maps_[t]));
  }

  Var vt_;
  int64_t n_;
  std::vector<std::vector<std::pair<Buffer, Buffer>>> maps_;
};

class VThreadInjector : public Mutator {
 public:
  using Mutator::mutate;

 protected:
  Stmt mutate_For(const For *op, const Stmt &self) override {
    Stmt body = mutate(op->body);
    if (op->for_kind != ForKind::kVThread) {
      return body.same_as(op->body) ? self : For::make(op->var, op->extent, op->for_kind, body);
    }
    return Expander(op->var, op->extent).expand(body);
  }
};

}  // namespace

Func inject_virtual_threads(const Func &f) {
  return {f.name, f.params, simplify(VThreadInjector().mutate(f.body))};
}

}  // namespace vacc::tir
