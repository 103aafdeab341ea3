#include "vacc/tir/verify.h"

#include <unordered_set>

#include "vacc/support/error.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/ops.h"
#include "vacc/tir/printer.h"

namespace vacc::tir {
namespace {

class Verifier : public Visitor {
 public:
  explicit Verifier(const Func &f) : func_(f) {
    for (const Buffer &b : f.params) {
      VACC_CHECK(b->scope == Scope::kGlobal)
          << func_.name << ": parameter " << b->name << " must be in global scope";
      buffers_.insert(b.get());
    }
  }
  using Visitor::visit;

 protected:
  void visit_Var(const VarNode *op) override {
    VACC_CHECK(vars_.count(op)) << func_.name << ": variable " << op->name
                                << " used outside the loop that binds it";
  }
  void visit_For(const For *op) override {
    VACC_CHECK(!vars_.count(op->var.get()))
        << func_.name << ": loop variable " << op->var->name << " bound twice in one scope";
    vars_.insert(op->var.get());
    visit(op->body);
    vars_.erase(op->var.get());
  }
  void visit_Allocate(const Allocate *op) override {
    const Buffer &b = op->buffer;
    VACC_CHECK(!buffers_.count(b.get()))
        << func_.name << ": buffer " << b->name << " allocated twice";
    VACC_CHECK(b->scope != Scope::kGlobal)
        << func_.name << ": allocation of " << b->name << " in global scope";
    if (is_scratchpad(b->scope)) {
      VACC_CHECK(b->shape.size() >= 2)
          << func_.name << ": scratchpad buffer " << b->name << " needs a tile shape";
    }
    buffers_.insert(b.get());
    visit(op->body);
    buffers_.erase(b.get());
  }
  void check_buffer(const Buffer &b) {
    if (!b) return;
    VACC_CHECK(buffers_.count(b.get()))
        << func_.name << ": buffer " << b->name << " used outside its allocation";
  }
  void check_access(const Buffer &b, const std::vector<Expr> &idx) {
    check_buffer(b);
    for (size_t i = 0; i < idx.size(); ++i) {
      int64_t c;
      if (as_const(idx[i], &c)) {
        VACC_CHECK(c >= 0 && c < b->shape[i]) << func_.name << ": index " << c << " of dimension "
                                              << i << " of " << b->name << " out of bounds";
      }
    }
  }
  void visit_Load(const Load *op) override {
    check_access(op->buffer, op->indices);
    Visitor::visit_Load(op);
  }
  void visit_Prefetch(const Prefetch *op) override {
    check_access(op->buffer, op->indices);
    Visitor::visit_Prefetch(op);
  }
  void visit_Store(const Store *op) override {
    check_access(op->buffer, op->indices);
    Visitor::visit_Store(op);
  }
  void visit_Dma(const Dma *op) override {
    check_buffer(op->sram);
    check_buffer(op->dram);
    Visitor::visit_Dma(op);
  }
  void visit_Gemm(const Gemm *op) override {
    check_buffer(op->acc);
    check_buffer(op->inp);
    check_buffer(op->wgt);
    Visitor::visit_Gemm(op);
  }
  void visit_Alu(const Alu *op) override {
    check_buffer(op->dst);
    check_buffer(op->src);
    Visitor::visit_Alu(op);
  }

 private:
  const Func &func_;
  std::unordered_set<const VarNode *> vars_;
  std::unordered_set<const BufferNode *> buffers_;
};

}  // namespace

void verify(const Func &f) {
  VACC_CHECK(f.body.defined()) << f.name << ": empty body";
  Verifier v(f);
  v.visit(f.body);
}

}  // namespace vacc::tir
