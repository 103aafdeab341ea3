#include "vacc/tir/equal.h"

#include <unordered_map>

namespace vacc::tir {
namespace {

class Equal {
 public:
  explicit Equal(bool map_free) : map_free_(map_free) {}
  // Free variables and buffers are the same object unless map_free; bound ones correspond
  // through their binding site (bind()).
  bool var(const VarNode *a, const VarNode *b, bool binding = false) {
    if (a->dtype != b->dtype) return false;
    if (!binding && !map_free_ && !var_ab_.count(a) && !var_ba_.count(b)) return a == b;
    return bijective(a, b, var_ab_, var_ba_);
  }
  bool buffer(const Buffer &a, const Buffer &b, bool binding = false) {
    if (!a || !b) return !a && !b;
    if (a->dtype != b->dtype || a->shape != b->shape || a->scope != b->scope ||
        a->vthread != b->vthread) {
      return false;
    }
    if (!binding && !map_free_ && !buf_ab_.count(a.get()) && !buf_ba_.count(b.get())) {
      return a == b;
    }
    return bijective(a.get(), b.get(), buf_ab_, buf_ba_);
  }

  bool expr(const Expr &a, const Expr &b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined() || a.same_as(b)) return true;
    if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
    switch (a.kind()) {
#define VACC_X(name, ...)                                    \
  case ExprKind::k##name: {                                  \
    auto *x = a.as<nodes::name>(), *y = b.as<nodes::name>(); \
    return expr(x->a, y->a) && expr(x->b, y->b);             \
  }
      VACC_TIR_BINARY_NODES(VACC_X)
#undef VACC_X
      case ExprKind::kIntImm:
        return a.as<IntImm>()->value == b.as<IntImm>()->value;
      case ExprKind::kFloatImm:
        return a.as<FloatImm>()->value == b.as<FloatImm>()->value;
      case ExprKind::kCall:
        return a.as<Call>()->op == b.as<Call>()->op &&
               exprs(a.as<Call>()->args, b.as<Call>()->args);
      case ExprKind::kVar:
        return var(a.as<VarNode>(), b.as<VarNode>());
      case ExprKind::kCast:
        return expr(a.as<Cast>()->value, b.as<Cast>()->value);
      case ExprKind::kNot:
        return expr(a.as<Not>()->a, b.as<Not>()->a);
      case ExprKind::kSelect: {
        auto *x = a.as<Select>(), *y = b.as<Select>();
        return expr(x->cond, y->cond) && expr(x->t, y->t) && expr(x->f, y->f);
      }
      case ExprKind::kLoad: {
        auto *x = a.as<Load>(), *y = b.as<Load>();
        return buffer(x->buffer, y->buffer) && exprs(x->indices, y->indices);
      }
    }
    return false;
  }

  bool exprs(const std::vector<Expr> &a, const std::vector<Expr> &b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!expr(a[i], b[i])) return false;
    }
    return true;
  }

  bool stmt(const Stmt &a, const Stmt &b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined()) return true;
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
      case StmtKind::kStore: {
        auto *x = a.as<Store>(), *y = b.as<Store>();
        return buffer(x->buffer, y->buffer) && exprs(x->indices, y->indices) &&
               expr(x->value, y->value);
      }
      case StmtKind::kPrefetch: {
        auto *x = a.as<Prefetch>(), *y = b.as<Prefetch>();
        return buffer(x->buffer, y->buffer) && exprs(x->indices, y->indices);
      }
      case StmtKind::kFor: {
        auto *x = a.as<For>(), *y = b.as<For>();
        return x->extent == y->extent && x->for_kind == y->for_kind &&
               var(x->var.get(), y->var.get(), true) && stmt(x->body, y->body);
      }
      case StmtKind::kIfThenElse: {
        auto *x = a.as<IfThenElse>(), *y = b.as<IfThenElse>();
        return expr(x->cond, y->cond) && stmt(x->then_case, y->then_case) &&
               stmt(x->else_case, y->else_case);
      }
      case StmtKind::kSeq: {
        auto *x = a.as<Seq>(), *y = b.as<Seq>();
        if (x->stmts.size() != y->stmts.size()) return false;
        for (size_t i = 0; i < x->stmts.size(); ++i) {
          if (!stmt(x->stmts[i], y->stmts[i])) return false;
        }
        return true;
      }
      case StmtKind::kAllocate: {
        auto *x = a.as<Allocate>(), *y = b.as<Allocate>();
        return x->base == y->base && buffer(x->buffer, y->buffer, true) && stmt(x->body, y->body);
      }
      case StmtKind::kAttr: {
        auto *x = a.as<Attr>(), *y = b.as<Attr>();
        return x->key == y->key && x->value == y->value && stmt(x->body, y->body);
      }
      case StmtKind::kDma: {
        auto *x = a.as<Dma>(), *y = b.as<Dma>();
        if (x->dir != y->dir || x->mem != y->mem || !buffer(x->sram, y->sram) ||
            !buffer(x->dram, y->dram)) {
          return false;
        }
        for (Expr Dma::*f :
             {&Dma::sram_index, &Dma::dram_index, &Dma::y_size, &Dma::x_size, &Dma::x_stride,
              &Dma::pad_top, &Dma::pad_bottom, &Dma::pad_left, &Dma::pad_right}) {
          if (!expr(x->*f, y->*f)) return false;
        }
        return true;
      }
      case StmtKind::kGemm: {
        auto *x = a.as<Gemm>(), *y = b.as<Gemm>();
        return x->reset == y->reset && x->loop_out == y->loop_out && x->loop_in == y->loop_in &&
               x->acc_f == y->acc_f && x->inp_f == y->inp_f && x->wgt_f == y->wgt_f &&
               buffer(x->acc, y->acc) && buffer(x->inp, y->inp) && buffer(x->wgt, y->wgt) &&
               expr(x->acc_index, y->acc_index) && expr(x->inp_index, y->inp_index) &&
               expr(x->wgt_index, y->wgt_index);
      }
      case StmtKind::kAlu: {
        auto *x = a.as<Alu>(), *y = b.as<Alu>();
        return x->op == y->op && x->use_imm == y->use_imm && x->imm == y->imm &&
               x->loop_out == y->loop_out && x->loop_in == y->loop_in && x->dst_f == y->dst_f &&
               x->src_f == y->src_f && buffer(x->dst, y->dst) && buffer(x->src, y->src) &&
               expr(x->dst_index, y->dst_index) && expr(x->src_index, y->src_index);
      }
      case StmtKind::kDepPush: {
        auto *x = a.as<DepPush>(), *y = b.as<DepPush>();
        return x->from == y->from && x->to == y->to;
      }
      case StmtKind::kDepPop: {
        auto *x = a.as<DepPop>(), *y = b.as<DepPop>();
        return x->from == y->from && x->to == y->to;
      }
    }
    return false;
  }

 private:
  template <typename T>
  static bool bijective(const T *a, const T *b, std::unordered_map<const T *, const T *> &ab,
                        std::unordered_map<const T *, const T *> &ba) {
    auto i = ab.find(a);
    auto j = ba.find(b);
    if (i == ab.end() && j == ba.end()) {
      ab[a] = b;
      ba[b] = a;
      return true;
    }
    return i != ab.end() && j != ba.end() && i->second == b && j->second == a;
  }
  bool map_free_;
  std::unordered_map<const VarNode *, const VarNode *> var_ab_, var_ba_;
  std::unordered_map<const BufferNode *, const BufferNode *> buf_ab_, buf_ba_;
};

}  // namespace

bool structural_equal(const Expr &a, const Expr &b, bool map_free) {
  return Equal(map_free).expr(a, b);
}
bool structural_equal(const Stmt &a, const Stmt &b, bool map_free) {
  return Equal(map_free).stmt(a, b);
}
bool structural_equal(const Func &a, const Func &b) {
  Equal eq(false);
  if (a.params.size() != b.params.size()) return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    if (!eq.buffer(a.params[i], b.params[i], true)) return false;
  }
  return eq.stmt(a.body, b.body);
}

}  // namespace vacc::tir
