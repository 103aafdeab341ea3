#include "vacc/lower/loops/tensorize.h"

#include <map>

#include "vacc/intrin/intrin.h"
#include "vacc/support/error.h"
#include "vacc/tir/arith.h"
#include "vacc/tir/equal.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/ops.h"
#include "vacc/tir/printer.h"

namespace vacc::tir {
namespace {

using intrin::TensorIntrin;

struct PeeledLoop {
  Var var;
  int64_t extent;
};

// Peels the perfect loop nest at s; returns the innermost body.
Stmt peel(const Stmt &s, std::vector<PeeledLoop> *loops) {
  Stmt cur = s;
  while (const For *f = cur.as<For>()) {
    loops->push_back({f->var, f->extent});
    cur = f->body;
  }
  return cur;
}

std::string loop_names(const std::vector<PeeledLoop> &loops) {
  std::string s;
  for (const PeeledLoop &l : loops) s += (s.empty() ? "" : ", ") + l.var->name;
  return s;
}

// Structural match of an actual nest body against an intrinsic description.
class Matcher {
 public:
  Matcher(const TensorIntrin &in, const std::vector<PeeledLoop> &desc,
          const std::vector<PeeledLoop> &act)
      : intrin_(in) {
    for (size_t i = 0; i < desc.size(); ++i) vars_[desc[i].var.get()] = act[i].var;
    for (const PeeledLoop &l : act) loop_vars_.push_back(l.var);
  }
  std::string why;
  std::map<const BufferNode *, Buffer> bufs;
  std::map<const BufferNode *, std::vector<Expr>> leading;
  std::array<int64_t, 2> imm = {0, 0};
  std::array<bool, 2> has_imm = {false, false};

  bool stmt(const Stmt &d, const Stmt &a) {
    const Store *ds = d.as<Store>();
    const Store *as = a.as<Store>();
    if (!as) {
      why = "the loop body is not a single store";
      return false;
    }
    return access(ds->buffer, ds->indices, as->buffer, as->indices) && expr(ds->value, as->value);
  }

  bool expr(const Expr &d, const Expr &a) {
    for (size_t i = 0; i < intrin_.imm.size(); ++i) {
      if (!intrin_.imm[i] || d.get() != intrin_.imm[i].get()) continue;
      int64_t v;
      if (!as_const(a, &v)) return mismatch(d, a);
      const int64_t lim = int64_t{1} << (intrin_.imm_bits - 1);
      if (v < -lim || v >= lim) {
        why = fmt::format("the constant {} does not fit the ALU's {}-bit immediate", v,
                          intrin_.imm_bits);
        return false;
      }
      if (has_imm[i] && imm[i] != v) return mismatch(d, a);
      has_imm[i] = true;
      imm[i] = v;
      return true;
    }
    if (d.kind() != a.kind() || d.dtype() != a.dtype()) return mismatch(d, a);
    switch (d.kind()) {
      case ExprKind::kIntImm:
        return d.as<IntImm>()->value == a.as<IntImm>()->value || mismatch(d, a);
      case ExprKind::kVar: {
        auto it = vars_.find(d.as<VarNode>());
        return (it != vars_.end() && it->second.get() == a.get()) || mismatch(d, a);
      }
      case ExprKind::kCast:
        return expr(d.as<Cast>()->value, a.as<Cast>()->value);
      case ExprKind::kLoad: {
        const Load *dl = d.as<Load>(), *al = a.as<Load>();
        return access(dl->buffer, dl->indices, al->buffer, al->indices);
      }
#define VACC_X(name, ...)                                           \
  case ExprKind::k##name: {                                         \
    const name *x = d.as<name>(), *y = a.as<name>();                \
    auto saved = save();                                            \
    if (expr(x->a, y->a) && expr(x->b, y->b)) return true;          \
    if (commutative(ExprKind::k##name)) {                           \
      std::string first = why;                                      \
      restore(saved);                                               \
      if (expr(x->a, y->b) && expr(x->b, y->a)) return true;        \
      why = first; /* report the operands in their written order */ \
    }                                                               \
    return false;                                                   \
  }
        VACC_TIR_BINARY_NODES(VACC_X)
#undef VACC_X
      default:
        return mismatch(d, a);
    }
  }

 private:
  static bool commutative(ExprKind k) {
    return k == ExprKind::kAdd || k == ExprKind::kMul || k == ExprKind::kMin || k == ExprKind::kMax;
  }
  struct State {
    std::map<const BufferNode *, Buffer> bufs;
    std::map<const BufferNode *, std::vector<Expr>> leading;
    std::array<bool, 2> has_imm;
    std::array<int64_t, 2> imm;
  };
  State save() const {
    return {bufs, leading, has_imm, imm};
  }
  void restore(const State &s) {
    why.clear();
    bufs = s.bufs;
    leading = s.leading;
    has_imm = s.has_imm;
    imm = s.imm;
  }
  bool mismatch(const Expr &d, const Expr &a) {
    if (why.empty()) {
      why = fmt::format("the nest computes `{}` where the intrinsic computes `{}`", to_string(a),
                        to_string(d));
    }
    return false;
  }

  bool access(const Buffer &d, const std::vector<Expr> &di, const Buffer &a,
              const std::vector<Expr> &ai) {
    if (a->scope != d->scope) {
      why = fmt::format(
          "buffer '{}' is in scope '{}' but the intrinsic's operand '{}' must be in "
          "scope '{}' (cache it there with cache_read/set_scope)",
          a->name, scope_name(a->scope), d->name, scope_name(d->scope));
      return false;
    }
    if (a->dtype != d->dtype) {
      why = fmt::format("buffer '{}' holds {} but the intrinsic's operand '{}' is {}", a->name,
                        a->dtype.str(), d->name, d->dtype.str());
      return false;
    }
    size_t r = ai.size();
    if (r < 2 || a->shape[r - 2] != d->shape[0] || a->shape[r - 1] != d->shape[1]) {
      why = fmt::format("buffer '{}' does not end in a {}x{} tile", a->name, d->shape[0],
                        d->shape[1]);
      return false;
    }
    for (size_t k = 0; k < 2; ++k) {
      Expr ae = simplify(ai[r - 2 + k]);
      const VarNode *dv = di[k].as<VarNode>();
      if (!dv || ae.get() != vars_.at(dv).get()) {
        why = fmt::format(
            "index {} of buffer '{}' is `{}` where the intrinsic expects the loop "
            "variable `{}`",
            r - 2 + k, a->name, to_string(ae), dv ? vars_.at(dv)->name : "?");
        return false;
      }
    }
    std::vector<Expr> lead(ai.begin(), ai.end() - 2);
    for (size_t k = 0; k < lead.size(); ++k) {
      for (const Var &v : loop_vars_) {
        if (uses_var(lead[k], v)) {
          why = fmt::format(
              "index {} of buffer '{}' (`{}`) depends on loop '{}', which the "
              "intrinsic must cover with its tile",
              k, a->name, to_string(lead[k]), v->name);
          return false;
        }
      }
    }
    auto it = bufs.find(d.get());
    if (it == bufs.end()) {
      bufs[d.get()] = a;
      leading[d.get()] = lead;
      return true;
    }
    if (it->second != a) {
      why = fmt::format("the intrinsic's operand '{}' is both '{}' and '{}'", d->name,
                        it->second->name, a->name);
      return false;
    }
    const auto &prev = leading[d.get()];
    for (size_t k = 0; k < lead.size(); ++k) {
      if (!structural_equal(simplify(prev[k]), simplify(lead[k]))) {
        why = fmt::format("buffer '{}' is read and written at different tiles", a->name);
        return false;
      }
    }
    return true;
  }

  const TensorIntrin &intrin_;
  std::map<const VarNode *, Var> vars_;
  std::vector<Var> loop_vars_;
};

Expr tile_index(const Buffer &b, const std::vector<Expr> &lead) {
  Expr t = 0;
  int64_t stride = 1;
  for (size_t k = lead.size(); k-- > 0;) {
    t = t + lead[k] * make_const(int32(), stride);
    stride *= b->shape[k];
  }
  return simplify(t);
}

// Tries one intrinsic on a nest; returns the replacement or an undefined Stmt with `why`.
Stmt try_intrin(const TensorIntrin &in, const std::vector<PeeledLoop> &loops, const Stmt &body,
                std::string *why) {
  std::vector<PeeledLoop> dl;
  Stmt dbody = peel(in.desc, &dl);
  if (dl.size() != loops.size()) {
    *why = fmt::format("the nest has {} loops ({}) but '{}' has {}", loops.size(),
                       loop_names(loops), in.name, dl.size());
    return Stmt();
  }
  for (size_t i = 0; i < dl.size(); ++i) {
    if (dl[i].extent != loops[i].extent) {
      *why = fmt::format("loop '{}' has extent {} where '{}' expects {}", loops[i].var->name,
                         loops[i].extent, in.name, dl[i].extent);
      return Stmt();
    }
  }
  Matcher m(in, dl, loops);
  if (!m.stmt(dbody, body)) {
    *why = m.why;
    return Stmt();
  }
  std::vector<Buffer> bufs;
  std::vector<Expr> tiles;
  for (const Buffer &d : in.operands) {
    const Buffer &a = m.bufs.at(d.get());
    bufs.push_back(a);
    tiles.push_back(tile_index(a, m.leading.at(d.get())));
  }
  return in.lower(bufs, tiles, m.imm);
}

class Tensorizer : public Mutator {
 public:
  explicit Tensorizer(const isa::HwConfig &c)
      : gemm_(intrin::gemm_intrins(c)), alu_(intrin::alu_intrins(c)) {}
  using Mutator::mutate;

 protected:
  Stmt mutate_Attr(const Attr *op, const Stmt &self) override {
    if (op->key == "tensorize") return tensorize_gemm(op);
    if (op->key == "pragma" && op->value == "alu") return lower_alu(op);
    return Mutator::mutate_Attr(op, self);
  }

 private:
  static void check_guard(const Stmt &body, const std::vector<PeeledLoop> &loops,
                          const char *what) {
    if (const IfThenElse *g = body.as<IfThenElse>()) {
      fail(
          "tensorize: {} at loop '{}': the body is guarded by `{}` because a split factor does "
          "not divide its axis; the intrinsic computes whole tiles and cannot express the "
          "guard: split only loops outside the intrinsic, or by factors that divide their "
          "extents",
          what, loops.empty() ? "?" : loops[0].var->name, to_string(g->cond));
    }
  }

  Stmt tensorize_gemm(const Attr *op) {
    if (op->value != "gemm") {
      fail(
          "tensorize: unknown intrinsic '{}'; the accelerator offers 'gemm' (ALU operations "
          "use pragma \"alu\")",
          op->value);
    }
    std::vector<PeeledLoop> loops;
    Stmt body = peel(op->body, &loops);
    // A reduction tail (a split factor that does not divide the reduction) guards the update
    // with a condition on loops outside the intrinsic: the whole GEMM runs or is skipped.
    std::vector<Expr> outer_guards;
    while (const IfThenElse *g = body.as<IfThenElse>()) {
      bool inside = false;
      for (const PeeledLoop &l : loops) inside |= uses_var(g->cond, l.var);
      if (inside || g->else_case.defined()) break;
      outer_guards.push_back(g->cond);
      body = g->then_case;
    }
    check_guard(body, loops, "'gemm'");
    const Store *st = body.as<Store>();
    bool is_init = st && is_const(st->value, 0);
    const TensorIntrin &in = is_init ? gemm_[1] : gemm_[0];
    std::string why;
    Stmt r = try_intrin(in, loops, body, &why);
    if (!r.defined()) {
      fail("tensorize: '{}' does not match the nest at loop '{}'{}: {}", in.name,
           loops.empty() ? "?" : loops[0].var->name,
           st ? fmt::format(" (writing '{}')", st->buffer->name) : "", why);
    }
    for (auto g = outer_guards.rbegin(); g != outer_guards.rend(); ++g) r = IfThenElse::make(*g, r);
    return r;
  }

  Stmt lower_alu(const Attr *op) {
    std::vector<PeeledLoop> loops;
    Stmt body = peel(op->body, &loops);
    check_guard(body, loops, "pragma alu");
    if (loops.size() < 2) {
      fail("tensorize: pragma alu at loop '{}': an ALU operation needs the two tile loops inside",
           loops.empty() ? "?" : loops[0].var->name);
    }
    std::vector<PeeledLoop> tile(loops.end() - 2, loops.end()),
        outer(loops.begin(), loops.end() - 2);
    std::string first_why;
    for (const TensorIntrin &in : alu_) {
      std::string why;
      Stmt r = try_intrin(in, tile, body, &why);
      if (r.defined()) {
        for (size_t i = outer.size(); i-- > 0;) {
          r = For::make(outer[i].var, outer[i].extent, ForKind::kSerial, r);
        }
        return r;
      }
      if (first_why.empty() || why.find("scope") != std::string::npos ||
          why.find("-bit immediate") != std::string::npos) {
        first_why = why;
      }
    }
    const Store *st = body.as<Store>();
    fail(
        "tensorize: pragma alu at loop '{}': `{}` matches no ALU intrinsic (min, max, add, shr, "
        "mul of the destination tile with an ACC tile or a constant; a clip to two constants "
        "where the config has extensions.alu_clip): {}",
        loops[0].var->name, st ? to_string(st->value) : "?", first_why);
  }

  std::vector<TensorIntrin> gemm_, alu_;
};

}  // namespace

Func tensorize(const Func &f, const isa::HwConfig &config) {
  return {f.name, f.params, simplify(Tensorizer(config).mutate(f.body))};
}

}  // namespace vacc::tir
