#include "vacc/tir/printer.h"

#include <fmt/format.h>

#include <set>
#include <unordered_map>

#include "vacc/tir/functor.h"
#include "vacc/tir/ops.h"

namespace vacc::tir {
namespace {

class Printer : public Visitor {
 public:
  std::string out;

  void print_func(const Func &f) {
    out += "func " + f.name + "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (i) out += ", ";
      out += buffer_decl(f.params[i]);
    }
    out += ") {\n";
    indent_ = 1;
    visit(f.body);
    out += "}\n";
  }

  void print_stmt(const Stmt &s) { visit(s); }
  std::string expr(const Expr &e) {
    std::string saved;
    saved.swap(out);
    visit(e);
    saved.swap(out);
    return saved;
  }
  using Visitor::visit;

 protected:
  // -------------------------------------------------------------------------- names
  std::string unique(const void *key, const std::string &base,
                     std::unordered_map<const void *, std::string> &names) {
    auto it = names.find(key);
    if (it != names.end()) return it->second;
    std::string n = base.empty() ? "v" : base;
    for (int k = 1; taken_.count(n); ++k) n = fmt::format("{}_{}", base, k);
    taken_.insert(n);
    names[key] = n;
    return n;
  }
  std::string name(const VarNode *v) { return unique(v, v->name, var_names_); }
  std::string name(const Buffer &b) { return unique(b.get(), b->name, buf_names_); }
  std::string buffer_decl(const Buffer &b) {
    std::string s = name(b) + ": " + b->dtype.str() + "[";
    for (size_t i = 0; i < b->shape.size(); ++i) s += (i ? ", " : "") + std::to_string(b->shape[i]);
    s += "] " + std::string(scope_name(b->scope));
    if (b->vthread >= 0) s += fmt::format(" vthread={}", b->vthread);
    return s;
  }
  std::string access(const Buffer &b, const std::vector<Expr> &idx) {
    std::string s = name(b) + "[";
    for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + expr(idx[i]);
    return s + "]";
  }
  std::string tile(const Buffer &b, const Expr &idx) { return name(b) + "[" + expr(idx) + "]"; }

  void line(const std::string &s) { out += std::string(indent_ * 2, ' ') + s + "\n"; }
  void block(const std::string &head, const Stmt &body) {
    line(head + " {");
    ++indent_;
    visit(body);
    --indent_;
    line("}");
  }

  // -------------------------------------------------------------------------- exprs
  // Precedence-based printing: parentheses only where needed to read it back the same way.
  static int prec(ExprKind k) {
    switch (k) {
      case ExprKind::kOr:
        return 1;
      case ExprKind::kAnd:
        return 2;
      case ExprKind::kEQ:
      case ExprKind::kNE:
      case ExprKind::kLT:
      case ExprKind::kLE:
      case ExprKind::kGT:
      case ExprKind::kGE:
        return 3;
      case ExprKind::kShr:
        return 4;
      case ExprKind::kAdd:
      case ExprKind::kSub:
        return 5;
      case ExprKind::kMul:
      case ExprKind::kDiv:
      case ExprKind::kMod:
        return 6;
      default:
        return 10;
    }
  }
  std::string operand(const Expr &child, int parent, bool right) {
    std::string s = expr(child);
    int p = prec(child.kind());
    return p < parent || (right && p == parent) ? "(" + s + ")" : s;
  }
#define VACC_X(name, op)                                                  \
  void visit_##name(const nodes::name *n) override {                      \
    if (std::string(op) == "min" || std::string(op) == "max") {           \
      out += fmt::format("{}({}, {})", op, expr(n->a), expr(n->b));       \
      return;                                                             \
    }                                                                     \
    int p = prec(n->kind);                                                \
    out += operand(n->a, p, false) + " " op " " + operand(n->b, p, true); \
  }
  VACC_TIR_BINARY_NODES(VACC_X)
#undef VACC_X
  void visit_IntImm(const IntImm *n) override {
    if (n->dtype.is_bool()) {
      out += n->value ? "true" : "false";
    } else {
      out += std::to_string(n->value);
    }
  }
  void visit_FloatImm(const FloatImm *n) override {
    out += fmt::format("{}f", n->value);
  }
  void visit_Call(const Call *n) override {
    out += std::string(call_op_name(n->op)) + "(";
    for (size_t i = 0; i < n->args.size(); ++i) out += (i ? ", " : "") + expr(n->args[i]);
    out += ")";
  }
  void visit_Var(const VarNode *n) override {
    out += name(n);
  }
  void visit_Cast(const Cast *n) override {
    out += n->dtype.str() + "(" + expr(n->value) + ")";
  }
  void visit_Not(const Not *n) override {
    out += "!" + expr(n->a);
  }
  void visit_Select(const Select *n) override {
    out += fmt::format("select({}, {}, {})", expr(n->cond), expr(n->t), expr(n->f));
  }
  void visit_Load(const Load *n) override {
    out += access(n->buffer, n->indices);
  }

  // -------------------------------------------------------------------------- stmts
  void visit_Store(const Store *n) override {
    line(access(n->buffer, n->indices) + " = " + expr(n->value));
  }
  void visit_Prefetch(const Prefetch *n) override {
    line("prefetch " + access(n->buffer, n->indices));
  }
  void visit_For(const For *n) override {
    block(fmt::format("{} ({}, 0, {})", for_kind_name(n->for_kind), name(n->var.get()), n->extent),
          n->body);
  }
  void visit_IfThenElse(const IfThenElse *n) override {
    line("if (" + expr(n->cond) + ") {");
    ++indent_;
    visit(n->then_case);
    --indent_;
    if (n->else_case.defined()) {
      line("} else {");
      ++indent_;
      visit(n->else_case);
      --indent_;
    }
    line("}");
  }
  void visit_Allocate(const Allocate *n) override {
    std::string head = "alloc " + buffer_decl(n->buffer);
    if (n->base >= 0) head += fmt::format(" at {}", n->base);
    block(head, n->body);
  }
  void visit_Attr(const Attr *n) override {
    const Seq *empty = n->body.as<Seq>();
    if (empty && empty->stmts.empty()) {  // a marker, e.g. a GPU barrier
      line(fmt::format("attr {} = \"{}\"", n->key, n->value));
      return;
    }
    block(fmt::format("attr {} = \"{}\"", n->key, n->value), n->body);
  }
  void visit_Dma(const Dma *n) override {
    std::string pads = fmt::format("pad=({}, {}, {}, {})", expr(n->pad_top), expr(n->pad_bottom),
                                   expr(n->pad_left), expr(n->pad_right));
    std::string shape =
        fmt::format("y={} x={} stride={}", expr(n->y_size), expr(n->x_size), expr(n->x_stride));
    if (n->dir == DmaDir::kLoad) {
      line(fmt::format("dma.load {} {} <- {} {} {}", isa::mem_id_name(n->mem),
                       tile(n->sram, n->sram_index), tile(n->dram, n->dram_index), shape, pads));
    } else {
      line(fmt::format("dma.store {} {} <- {} {}", isa::mem_id_name(n->mem),
                       tile(n->dram, n->dram_index), tile(n->sram, n->sram_index), shape));
    }
  }
  static std::string factors(const char *k, const Factors &f) {
    return fmt::format(" {}=({}, {})", k, f.out, f.in);
  }
  void visit_Gemm(const Gemm *n) override {
    std::string s;
    if (n->reset) {
      s = "gemm.reset " + tile(n->acc, n->acc_index);
    } else {
      s = fmt::format("gemm {} += {} * {}", tile(n->acc, n->acc_index), tile(n->inp, n->inp_index),
                      tile(n->wgt, n->wgt_index));
    }
    if (n->loop_out != 1 || n->loop_in != 1) {
      s += fmt::format(" loop=({}, {})", n->loop_out, n->loop_in) + factors("acc", n->acc_f);
      if (!n->reset) s += factors("inp", n->inp_f) + factors("wgt", n->wgt_f);
    }
    line(s);
  }
  void visit_Alu(const Alu *n) override {
    std::string s =
        fmt::format("alu.{} {} <- ", isa::alu_op_name(n->op), tile(n->dst, n->dst_index));
    s += n->use_imm ? fmt::format("imm {}", n->imm) : tile(n->src, n->src_index);
    if ((n->op == isa::AluOp::kClip && n->use_imm) || n->op == isa::AluOp::kShrClip) {
      const auto imm = static_cast<int32_t>(n->imm);
      s += fmt::format(" [{}, {}]", isa::clip_low(imm), isa::clip_high(imm));
    }
    if (n->loop_out != 1 || n->loop_in != 1) {
      s += fmt::format(" loop=({}, {})", n->loop_out, n->loop_in) + factors("dst", n->dst_f);
      if (!n->use_imm) s += factors("src", n->src_f);
    }
    line(s);
  }
  void visit_DepPush(const DepPush *n) override {
    line(fmt::format("dep.push {} -> {}", isa::engine_name(n->from), isa::engine_name(n->to)));
  }
  void visit_DepPop(const DepPop *n) override {
    line(fmt::format("dep.pop {} -> {}", isa::engine_name(n->from), isa::engine_name(n->to)));
  }

 private:
  int indent_ = 0;
  std::set<std::string> taken_;
  std::unordered_map<const void *, std::string> var_names_, buf_names_;
};

}  // namespace

std::string to_string(const Expr &e) {
  Printer p;
  return p.expr(e);
}
std::string to_string(const Stmt &s) {
  Printer p;
  p.print_stmt(s);
  return p.out;
}
std::string to_string(const Func &f) {
  Printer p;
  p.print_func(f);
  return p.out;
}

}  // namespace vacc::tir
