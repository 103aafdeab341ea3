#include "vacc/lower/loops/fold_uop_loops.h"

#include "vacc/isa/encoding.h"
#include "vacc/tir/arith.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/ops.h"

namespace vacc::tir {
namespace {

bool coeff(const Expr &e, const Var &v, int64_t *c) {
  return affine_coeff(e, v, c) && *c >= 0;
}

Expr at_zero(const Expr &e, const Var &v) {
  return simplify(substitute(e, {{v, make_const(v->dtype, 0)}}));
}

class Folder : public Mutator {
 public:
  using Mutator::mutate;

 protected:
  Stmt mutate_For(const For *op, const Stmt &self) override {
    Stmt body = mutate(op->body);
    bool foldable = (op->for_kind == ForKind::kSerial || op->for_kind == ForKind::kUnrolled) &&
                    op->extent < (int64_t{1} << isa::kLoopBits);
    if (foldable) {
      if (const Gemm *g = body.as<Gemm>()) {
        Stmt r = fold_gemm(*g, op);
        if (r.defined()) return r;
      }
      if (const Alu *a = body.as<Alu>()) {
        Stmt r = fold_alu(*a, op);
        if (r.defined()) return r;
      }
    }
    return body.same_as(op->body) ? self : For::make(op->var, op->extent, op->for_kind, body);
  }

 private:
  // Which level a new loop takes: the inner one first, then the outer one.
  static bool level(int64_t loop_out, int64_t loop_in, bool *inner) {
    if (loop_in == 1 && loop_out == 1) {
      *inner = true;
      return true;
    }
    if (loop_out == 1) {
      *inner = false;
      return true;
    }
    return false;
  }
  static void set(Factors *f, bool inner, int64_t c) { (inner ? f->in : f->out) = c; }

  Stmt fold_gemm(Gemm g, const For *op) {
    bool inner;
    if (!level(g.loop_out, g.loop_in, &inner)) return Stmt();
    int64_t ca = 0, ci = 0, cw = 0;
    if (!coeff(g.acc_index, op->var, &ca)) return Stmt();
    if (!g.reset && (!coeff(g.inp_index, op->var, &ci) || !coeff(g.wgt_index, op->var, &cw))) {
      return Stmt();
    }
    if (inner) {
      g.loop_in = op->extent;
    } else {
      g.loop_out = op->extent;
    }
    set(&g.acc_f, inner, ca);
    g.acc_index = at_zero(g.acc_index, op->var);
    if (!g.reset) {
      set(&g.inp_f, inner, ci);
      set(&g.wgt_f, inner, cw);
      g.inp_index = at_zero(g.inp_index, op->var);
      g.wgt_index = at_zero(g.wgt_index, op->var);
    }
    return Gemm::make(g);
  }

  Stmt fold_alu(Alu a, const For *op) {
    bool inner;
    if (!level(a.loop_out, a.loop_in, &inner)) return Stmt();
    int64_t cd = 0, cs = 0;
    if (!coeff(a.dst_index, op->var, &cd)) return Stmt();
    if (!a.use_imm && !coeff(a.src_index, op->var, &cs)) return Stmt();
    if (inner) {
      a.loop_in = op->extent;
    } else {
      a.loop_out = op->extent;
    }
    set(&a.dst_f, inner, cd);
    a.dst_index = at_zero(a.dst_index, op->var);
    if (!a.use_imm) {
      set(&a.src_f, inner, cs);
      a.src_index = at_zero(a.src_index, op->var);
    }
    return Alu::make(a);
  }
};

}  // namespace

Func fold_uop_loops(const Func &f) {
  return {f.name, f.params, Folder().mutate(f.body)};
}

}  // namespace vacc::tir
