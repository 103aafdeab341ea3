#include "vacc/lower/loops/check_accelerator_only.h"

#include "vacc/support/error.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/printer.h"

namespace vacc::tir {
namespace {

class Checker : public Visitor {
 public:
  explicit Checker(const Func &f) : f_(f) {}
  using Visitor::visit;

 protected:
  void visit_Store(const Store *op) override {
    fail(
        "{}: `{}[...] = {}` is scalar code, which the accelerator cannot run; mark the stage "
        "writing '{}' with pragma \"dma_copy\" or \"alu\", or tensorize it",
        f_.name, op->buffer->name, to_string(op->value), op->buffer->name);
  }
  void visit_Attr(const Attr *op) override {
    fail("{}: the mark `{} = {}` was not lowered", f_.name, op->key, op->value);
  }
  void visit_For(const For *op) override {
    if (op->for_kind == ForKind::kVThread) {
      fail("{}: virtual-thread loop '{}' was not expanded", f_.name, op->var->name);
    }
    Visitor::visit_For(op);
  }

 private:
  const Func &f_;
};

}  // namespace

Func check_accelerator_only(const Func &f) {
  Checker c(f);
  c.visit(f.body);
  return f;
}

}  // namespace vacc::tir
