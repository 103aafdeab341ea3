// insert_barriers: a barrier before each phase that would otherwise race with an earlier one
// (passes.h). Buffers are compared whole; private (local) buffers never need one.
#include <set>

#include "passes.h"
#include "vacc/tir/functor.h"

namespace vacc::codegen::gpu {
namespace {

struct Footprint {
  std::set<const tir::BufferNode *> reads, writes;
  void add(const Footprint &o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
  bool empty() const { return reads.empty() && writes.empty(); }
};

bool meets(const std::set<const tir::BufferNode *> &a, const std::set<const tir::BufferNode *> &b) {
  for (auto *x : a) {
    if (b.count(x)) return true;
  }
  return false;
}

// True when b after a (with no barrier between) may race: one writes what the other touches.
bool conflict(const Footprint &a, const Footprint &b) {
  return meets(a.writes, b.reads) || meets(a.writes, b.writes) || meets(a.reads, b.writes);
}

bool visible(const tir::BufferNode *b) {
  return b->scope == tir::Scope::kShared || b->scope == tir::Scope::kGlobal;
}

Footprint footprint(const tir::Stmt &s) {
  Footprint f;
  struct V : tir::Visitor {
    Footprint *f;
    void visit_Load(const tir::Load *op) override {
      if (visible(op->buffer.get())) f->reads.insert(op->buffer.get());
      Visitor::visit_Load(op);
    }
    void visit_Store(const tir::Store *op) override {
      if (visible(op->buffer.get())) f->writes.insert(op->buffer.get());
      Visitor::visit_Store(op);
    }
  } v;
  v.f = &f;
  v.visit(s);
  return f;
}

bool has_phase(const tir::Stmt &s) {
  bool found = false;
  tir::for_each_stmt(s, [&](const tir::Stmt &x) {
    if (const tir::For *f = x.as<tir::For>()) found |= tir::is_gpu_thread(f->for_kind);
  });
  return found;
}

class Barriers {
 public:
  // s runs at the uniform level; `pending_` holds the accesses since the last barrier.
  tir::Stmt visit(const tir::Stmt &s) {
    if (!s.defined()) return s;
    const tir::For *loop = s.as<tir::For>();
    bool uniform_container = has_phase(s) && !(loop && tir::is_gpu_thread(loop->for_kind));
    if (!uniform_container) return item(s);
    if (const tir::Seq *q = s.as<tir::Seq>()) {
      std::vector<tir::Stmt> out;
      for (const tir::Stmt &x : q->stmts) out.push_back(visit(x));
      return tir::Seq::make(out);
    }
    if (loop) {
      // The previous iteration's accesses are pending when an iteration starts.
      pending_.add(footprint(loop->body));
      tir::Stmt body = visit(loop->body);
      return tir::For::make(loop->var, loop->extent, loop->for_kind, body);
    }
    if (const tir::IfThenElse *c = s.as<tir::IfThenElse>()) {
      Footprint in = pending_;
      tir::Stmt t = visit(c->then_case);
      Footprint after_then = pending_;
      pending_ = in;
      tir::Stmt e = visit(c->else_case);
      pending_.add(after_then);
      return tir::IfThenElse::make(c->cond, t, e);
    }
    if (const tir::Allocate *a = s.as<tir::Allocate>()) {
      return tir::Allocate::make(a->buffer, visit(a->body), a->base);
    }
    if (const tir::Attr *a = s.as<tir::Attr>()) {
      return tir::Attr::make(a->key, a->value, visit(a->body));
    }
    return item(s);
  }

 private:
  tir::Stmt item(const tir::Stmt &s) {
    Footprint f = footprint(s);
    if (f.empty()) return s;
    if (!conflict(pending_, f) && !conflict(f, pending_)) {
      pending_.add(f);
      return s;
    }
    pending_ = f;
    return tir::Seq::make({make_barrier(), s});
  }
  Footprint pending_;
};

}  // namespace

tir::Stmt insert_barriers(const tir::Stmt &body) {
  if (!has_phase(body)) return body;
  return Barriers().visit(body);
}

}  // namespace vacc::codegen::gpu
