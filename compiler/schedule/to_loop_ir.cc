#include "vacc/schedule/to_loop_ir.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "vacc/support/error.h"
#include "vacc/tir/arith.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/ops.h"

namespace vacc::schedule {
namespace {

using tir::Expr;
using tir::Stmt;

struct StageInfo {
  const Stage *stage = nullptr;
  Expr body;                    // after inlining
  std::vector<Expr> min;        // region min per root axis
  std::vector<int64_t> extent;  // region extent per root axis
  tir::Buffer buffer;           // realized buffer
  std::map<const te::IterVarNode *, int64_t> ext;
  std::map<const te::IterVarNode *, Expr> value;
  std::vector<std::pair<Expr, bool>> guards;  // condition, involves a reduction axis
  bool alias = false;                         // computes in place in its operand's buffer
};

// Replaces loads of inlined stages by their bodies.
class Inliner : public tir::Mutator {
 public:
  explicit Inliner(const std::map<const tir::BufferNode *, const StageInfo *> &inl) : inl_(inl) {}
  using Mutator::mutate;

 protected:
  Expr mutate_Load(const tir::Load *op, const Expr &self) override {
    Expr e = Mutator::mutate_Load(op, self);
    const tir::Load *l = e.as<tir::Load>();
    auto it = inl_.find(l->buffer.get());
    if (it == inl_.end()) return e;
    const te::Tensor &t = it->second->stage->op();
    std::vector<std::pair<tir::Var, Expr>> sub;
    for (size_t i = 0; i < t->axes.size(); ++i) sub.emplace_back(t->axes[i]->var, l->indices[i]);
    return tir::substitute(it->second->body, sub);
  }

 private:
  const std::map<const tir::BufferNode *, const StageInfo *> &inl_;
};

class LoadCollector : public tir::Visitor {
 public:
  explicit LoadCollector(const tir::BufferNode *b) : b_(b) {}
  std::vector<std::vector<Expr>> accesses;

 protected:
  void visit_Load(const tir::Load *op) override {
    if (op->buffer.get() == b_) accesses.push_back(op->indices);
    Visitor::visit_Load(op);
  }

 private:
  const tir::BufferNode *b_;
};

// Rewrites loads of realized stages to their buffers, relative to the region min, and
// zero-guards loads of DRAM tensors that may fall outside the tensor.
class LoadRewriter : public tir::Mutator {
 public:
  LoadRewriter(const std::map<const tir::BufferNode *, const StageInfo *> &realized,
               const tir::RangeMap &ranges)
      : realized_(realized), ranges_(ranges) {}
  using Mutator::mutate;

 protected:
  Expr mutate_Select(const tir::Select *op, const Expr &self) override {
    Expr c = mutate(op->cond);
    size_t n = facts_.size();
    add_facts(op->cond);
    Expr t = mutate(op->t);
    facts_.resize(n);
    Expr f = mutate(op->f);
    if (c.same_as(op->cond) && t.same_as(op->t) && f.same_as(op->f)) return self;
    return tir::Select::make(c, t, f);
  }
  Expr mutate_Load(const tir::Load *op, const Expr &self) override {
    std::vector<Expr> idx;
    mutate_list(op->indices, &idx);
    auto it = realized_.find(op->buffer.get());
    if (it != realized_.end()) {
      const StageInfo *p = it->second;
      for (size_t k = 0; k < idx.size(); ++k) idx[k] = tir::simplify(idx[k] - p->min[k], ranges_);
      return tir::Load::make(p->buffer, idx);
    }
    Expr load = tir::Load::make(op->buffer, idx);
    Expr guard;
    for (size_t k = 0; k < idx.size(); ++k) {
      Expr lo = idx[k] >= 0, hi = idx[k] < tir::make_const(idx[k].dtype(), op->buffer->shape[k]);
      for (Expr c : {lo, hi}) {
        if (!proven(c)) guard = guard.defined() ? (guard && c) : c;
      }
    }
    if (!guard.defined()) return load;
    return tir::select(guard, load, tir::make_const(load.dtype(), 0));
  }

 private:
  // Facts "e >= 0" from a conjunction of comparisons.
  void add_facts(const Expr &c) {
    if (const tir::And *a = c.as<tir::And>()) {
      add_facts(a->a);
      add_facts(a->b);
    } else if (const tir::GE *x = c.as<tir::GE>()) {
      facts_.push_back(x->a - x->b);
    } else if (const tir::LE *x = c.as<tir::LE>()) {
      facts_.push_back(x->b - x->a);
    } else if (const tir::LT *x = c.as<tir::LT>()) {
      facts_.push_back(x->b - x->a - 1);
    } else if (const tir::GT *x = c.as<tir::GT>()) {
      facts_.push_back(x->a - x->b - 1);
    }
  }
  bool proven(const Expr &cond) {
    if (tir::can_prove(cond, ranges_)) return true;
    Expr e;
    if (const tir::GE *x = cond.as<tir::GE>()) e = x->a - x->b;
    if (const tir::LT *x = cond.as<tir::LT>()) e = x->b - x->a - 1;
    if (!e.defined()) return false;
    for (const Expr &f : facts_) {
      if (tir::bound_of(tir::simplify(e - f, ranges_), ranges_).lo >= 0) return true;
    }
    return false;
  }
  const std::map<const tir::BufferNode *, const StageInfo *> &realized_;
  const tir::RangeMap &ranges_;
  std::vector<Expr> facts_;
};

class Lowerer {
 public:
  Lowerer(const Schedule &s, const std::vector<Tensor> &args) : sched_(s) {
    for (const Tensor &t : args) arg_buffers_.insert(t->buffer.get());
    for (const auto &st : s.stages()) {
      StageInfo &info = infos_[st.get()];
      info.stage = st.get();
      order_.push_back(st.get());
    }
  }

  Stmt run() {
    inline_bodies();
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const Stage *st = *it;
      if (st->op()->placeholder || st->attach() == Attach::kInline) continue;
      infer_bounds(infos_[st]);
      derive_axes(infos_[st]);
    }
    for (const Stage *st : order_) {
      if (st->op()->placeholder || st->attach() == Attach::kInline) continue;
      make_buffer(infos_[st]);
    }
    std::vector<Stmt> nests;
    std::vector<tir::Buffer> allocs;
    for (const Stage *st : order_) {
      if (st->op()->placeholder || st->attach() != Attach::kRoot) continue;
      nests.push_back(build(infos_[st]));
      if (!arg_buffers_.count(st->op()->buffer.get())) allocs.push_back(infos_[st].buffer);
    }
    Stmt body = tir::Seq::make(nests);
    for (auto it = allocs.rbegin(); it != allocs.rend(); ++it)
      body = tir::Allocate::make(*it, body);
    return tir::simplify(body);
  }

 private:
  void inline_bodies() {
    std::map<const tir::BufferNode *, const StageInfo *> inl;
    for (const Stage *st : order_) {
      StageInfo &info = infos_[st];
      if (st->op()->placeholder) continue;
      info.body = Inliner(inl).mutate(st->op()->body);
      if (st->attach() == Attach::kInline) inl[st->op()->buffer.get()] = &info;
    }
  }

  // Region of `info`'s tensor that its consumers read, per root axis.
  void infer_bounds(StageInfo &info) {
    const Stage *st = info.stage;
    const auto &shape = st->op()->shape();
    info.min.assign(shape.size(), Expr());
    info.extent.assign(shape.size(), 0);
    if (st->attach() == Attach::kRoot) {
      for (size_t k = 0; k < shape.size(); ++k) {
        info.min[k] = 0;
        info.extent[k] = shape[k];
      }
      return;
    }
    const Stage *parent = st->attach_stage();
    std::set<const tir::VarNode *> parent_inner;
    const auto &pl = parent->leaf_iter_vars();
    auto at = std::find(pl.begin(), pl.end(), st->attach_iv());
    for (auto i = at + 1; i < pl.end(); ++i) parent_inner.insert((*i)->var.get());
    bool any = false;
    std::vector<int64_t> end(shape.size(), 0);  // past the last index read, per axis
    for (const Stage *c : order_) {
      const StageInfo &ci = infos_[c];
      if (c->op()->placeholder || c->attach() == Attach::kInline || !ci.body.defined()) continue;
      LoadCollector lc(st->op()->buffer.get());
      lc.visit(ci.body);
      if (lc.accesses.empty()) continue;
      // The reader and the stages it is computed inside, up to the one computed in `parent`
      // (a stage computed inside a stage computed inside the parent reads from within it too).
      std::vector<const Stage *> path;
      for (const Stage *x = c; x != parent; x = x->attach_stage()) {
        if (x->attach() != Attach::kAt) {
          path.clear();
          break;
        }
        path.push_back(x);
        if (x->attach_stage() == parent) break;
      }
      const bool inside =
          c == parent || (!path.empty() && path.back()->attach_stage() == parent &&
                          std::find(at, pl.end(), path.back()->attach_iv()) != pl.end());
      if (!inside) {
        fail(
            "lower: stage '{}' is computed at '{}' of stage '{}' but is also read by stage '{}' "
            "outside that loop; compute '{}' at the same place or compute '{}' at root",
            st->name(), st->attach_iv()->var->name, parent->name(), c->name(), c->name(),
            st->name());
      }
      std::set<const tir::VarNode *> relaxed = parent_inner;
      for (const Stage *x : path)
        for (const IterVar &iv : x->leaf_iter_vars()) relaxed.insert(iv->var.get());
      // A relaxed loop of one iteration is its value 0: substituted, an index that is not
      // affine in it (a grouped convolution's first input block, output block / blocks per
      // group) keeps its exact region instead of the whole axis.
      std::vector<std::pair<tir::Var, Expr>> single_iteration;
      auto note_single = [&](const IterVar &iv) {
        auto it = ranges_.find(iv->var.get());
        if (it != ranges_.end() && it->second.lo == 0 && it->second.hi == 0)
          single_iteration.emplace_back(iv->var, tir::make_const(iv->var->dtype, 0));
      };
      for (auto i = at + 1; i < pl.end(); ++i) note_single(*i);
      for (const Stage *x : path)
        for (const IterVar &iv : x->leaf_iter_vars()) note_single(iv);
      std::vector<std::pair<tir::Var, Expr>> sub = root_substitution(ci);
      for (const auto &acc : lc.accesses) {
        for (size_t k = 0; k < acc.size(); ++k) {
          Expr e = tir::simplify(tir::substitute(tir::substitute(acc[k], sub), single_iteration),
                                 ranges_);
          Expr mn;
          int64_t ext;
          relax(e, relaxed, shape[k], &mn, &ext);
          unite(info, k, mn, ext, any);
          const tir::Interval b = tir::bound_of(e, ranges_);
          if (b.hi != tir::kPosInf) end[k] = std::max(end[k], b.hi + 1);
        }
        any = true;
      }
    }
    if (!any) {
      fail("lower: stage '{}' is computed at '{}' of stage '{}' but nothing reads it there",
           st->name(), st->attach_iv()->var->name, parent->name());
    }
    // A region that covers the whole axis also covers what a tail tile (a split factor that
    // does not divide its axis) reads past the axis's end: those elements are computed or
    // loaded for nothing, but they stay inside the buffer.
    for (size_t k = 0; k < shape.size(); ++k) {
      int64_t mn = -1;
      if (tir::as_const(info.min[k], &mn) && mn == 0 && info.extent[k] == shape[k])
        info.extent[k] = std::max(info.extent[k], end[k]);
    }
  }

  void relax(const Expr &e, const std::set<const tir::VarNode *> &relaxed, int64_t dim, Expr *mn,
             int64_t *ext) {
    tir::LinearForm f = tir::linear_form(e);
    tir::LinearForm fixed;
    fixed.constant = f.constant;
    int64_t extent = 1;
    for (const auto &[atom, c] : f.terms) {
      const tir::VarNode *v = atom.as<tir::VarNode>();
      if (v && relaxed.count(v)) {
        int64_t n = ranges_.at(v).hi + 1;
        extent += std::abs(c) * (n - 1);
        if (c < 0) fixed.constant += c * (n - 1);
        continue;
      }
      if (tir::uses_var_if(atom, [&](const tir::VarNode *x) { return relaxed.count(x) > 0; })) {
        *mn = 0;
        *ext = dim;
        return;
      }
      fixed.terms.emplace_back(atom, c);
    }
    *mn = tir::from_linear_form(fixed, e.dtype());
    *ext = std::min(extent, dim);
    if (extent >= dim) *mn = 0;
  }

  void unite(StageInfo &info, size_t k, const Expr &mn, int64_t ext, bool any) {
    if (!any || !info.min[k].defined()) {
      info.min[k] = mn;
      info.extent[k] = ext;
      return;
    }
    int64_t d;
    Expr diff = tir::simplify(mn - info.min[k], ranges_);
    int64_t dim = info.stage->op()->shape()[k];
    if (!tir::as_const(diff, &d)) {
      info.min[k] = 0;
      info.extent[k] = dim;
      return;
    }
    int64_t lo = std::min<int64_t>(0, d), hi = std::max(info.extent[k], d + ext);
    if (d < 0) info.min[k] = mn;
    info.extent[k] = std::min(hi - lo, dim);
    if (hi - lo >= dim) info.min[k] = 0;
  }

  // Root axis var -> region min + value from the leaves.
  std::vector<std::pair<tir::Var, Expr>> root_substitution(const StageInfo &info) {
    std::vector<std::pair<tir::Var, Expr>> sub;
    const Tensor &op = info.stage->op();
    for (size_t k = 0; k < op->axes.size(); ++k) {
      sub.emplace_back(op->axes[k]->var, info.min[k] + info.value.at(op->axes[k].get()));
    }
    for (const IterVar &iv : op->reduce_axes) sub.emplace_back(iv->var, info.value.at(iv.get()));
    return sub;
  }

  // Extents of every iter var from the region, and values of the roots from the leaves.
  void derive_axes(StageInfo &info) {
    const Stage *st = info.stage;
    const Tensor &op = st->op();
    for (size_t k = 0; k < op->axes.size(); ++k) info.ext[op->axes[k].get()] = info.extent[k];
    for (const IterVar &iv : op->reduce_axes) info.ext[iv.get()] = iv->extent;
    for (const Relation &r : st->relations()) {
      if (r.kind == Relation::kSplit) {
        int64_t pe = info.ext.at(r.parent.get());
        info.ext[r.outer.get()] = (pe + r.factor - 1) / r.factor;
        info.ext[r.inner.get()] = std::min(r.factor, pe);
      } else {
        info.ext[r.fused.get()] = info.ext.at(r.outer.get()) * info.ext.at(r.inner.get());
      }
    }
    for (const IterVar &iv : st->leaf_iter_vars()) {
      info.value[iv.get()] = iv->var;
      ranges_[iv->var.get()] = {0, info.ext.at(iv.get()) - 1};
    }
    const auto &rels = st->relations();
    for (auto it = rels.rbegin(); it != rels.rend(); ++it) {
      const Relation &r = *it;
      if (r.kind == Relation::kSplit) {
        Expr v = info.value.at(r.outer.get()) *
                     tir::make_const(tir::int32(), info.ext.at(r.inner.get())) +
                 info.value.at(r.inner.get());
        info.value[r.parent.get()] = v;
        int64_t pe = info.ext.at(r.parent.get());
        if (info.ext.at(r.outer.get()) * info.ext.at(r.inner.get()) != pe) {
          info.guards.emplace_back(v < tir::make_const(tir::int32(), pe), r.parent->reduce);
        }
      } else {
        Expr f = info.value.at(r.fused.get());
        Expr ie = tir::make_const(tir::int32(), info.ext.at(r.inner.get()));
        info.value[r.outer.get()] = f / ie;
        info.value[r.inner.get()] = f % ie;
      }
    }
  }

  // An element-wise stage in a scratchpad whose operand is the only use of another stage
  // computed at the same place with the same region works in place in that stage's buffer
  // (the accelerator's ALU writes its first operand).
  const StageInfo *in_place_operand(const StageInfo &info) {
    const Stage *st = info.stage;
    if (st->attach() != Attach::kAt || !tir::is_scratchpad(st->scope()) ||
        !st->op()->reduce_axes.empty()) {
      return nullptr;
    }
    // The operands of the body's operation, left to right, and of operations nested in it (a
    // clip's min(max(x, lo), hi) is one ALU operation on x).
    std::vector<Expr> operands;
    std::function<void(const Expr &)> collect = [&](const Expr &b) {
      switch (b.kind()) {
#define VACC_X(name, ...)                   \
  case tir::ExprKind::k##name:              \
    collect(b.as<tir::name>()->a);          \
    collect(b.as<tir::name>()->b);          \
    return;
        VACC_TIR_ARITH_NODES(VACC_X)
#undef VACC_X
        default:
          operands.push_back(b);
      }
    };
    switch (info.body.kind()) {
#define VACC_X(name, ...) case tir::ExprKind::k##name:
      VACC_TIR_ARITH_NODES(VACC_X)
#undef VACC_X
      collect(info.body);
      break;
      default:
        return nullptr;
    }
    if (operands.empty()) return nullptr;
    for (const Expr &e : operands) {
      const tir::Load *l = e.as<tir::Load>();
      if (!l) continue;
      auto it = realized_.find(l->buffer.get());
      if (it == realized_.end()) continue;
      const StageInfo *p = it->second;
      const Stage *ps = p->stage;
      if (ps->attach() != Attach::kAt || ps->attach_stage() != st->attach_stage() ||
          ps->attach_iv() != st->attach_iv() || ps->scope() != st->scope() ||
          p->extent != info.extent || ps->is_output()) {
        continue;
      }
      bool same = true;
      for (size_t k = 0; k < l->indices.size(); ++k) {
        same &=
            l->indices[k].get() == static_cast<const tir::ExprNode *>(st->op()->axes[k]->var.get());
        same &= tir::is_const(tir::simplify(p->min[k] - info.min[k], ranges_), 0);
      }
      int readers = 0;
      for (const auto &[s2, i2] : infos_) {
        if (!i2.body.defined() || s2->attach() == Attach::kInline) continue;
        LoadCollector lc(l->buffer.get());
        lc.visit(i2.body);
        readers += !lc.accesses.empty();
      }
      if (same && readers == 1) return p;
    }
    return nullptr;
  }

  void make_buffer(StageInfo &info) {
    const Tensor &op = info.stage->op();
    if (const StageInfo *p = in_place_operand(info)) {
      info.buffer = p->buffer;
      info.alias = true;
    } else if (arg_buffers_.count(op->buffer.get())) {
      info.buffer = op->buffer;
    } else {
      tir::Scope scope = info.stage->scope();
      if (scope == tir::Scope::kGlobal) scope = tir::Scope::kLocal;
      info.buffer = tir::make_buffer(op->name, op->dtype(), info.extent, scope);
    }
    realized_[op->buffer.get()] = &info;
  }

  Stmt wrap_loop(const StageInfo &info, const IterVar &iv, Stmt body) {
    const Stage *st = info.stage;
    Stmt s = tir::For::make(iv->var, info.ext.at(iv.get()), st->for_kind(iv), body);
    std::string t = st->annotation(st->tensorized(), iv);
    if (!t.empty()) s = tir::Attr::make("tensorize", t, s);
    std::string p = st->annotation(st->pragmas(), iv);
    if (!p.empty()) s = tir::Attr::make("pragma", p, s);
    return s;
  }

  // The stages computed at loop `iv` of `info`'s stage, realized around `body`.
  Stmt attach_children(const StageInfo &info, const IterVar &iv, Stmt body) {
    std::vector<Stmt> nests;
    std::vector<tir::Buffer> bufs;
    for (const Stage *c : order_) {
      if (c->attach() != Attach::kAt || c->attach_stage() != info.stage || c->attach_iv() != iv) {
        continue;
      }
      nests.push_back(build(infos_.at(c)));
      if (!infos_.at(c).alias) bufs.push_back(infos_.at(c).buffer);
    }
    if (nests.empty()) return body;
    nests.push_back(body);
    Stmt s = tir::Seq::make(nests);
    for (auto it = bufs.rbegin(); it != bufs.rend(); ++it) s = tir::Allocate::make(*it, s);
    return s;
  }

  Stmt guarded(const StageInfo &info, Stmt s, bool include_reduce) {
    for (const auto &[g, red] : info.guards) {
      if (red && !include_reduce) continue;
      s = tir::IfThenElse::make(g, s);
    }
    return s;
  }

  Stmt build(const StageInfo &info) {
    const Stage *st = info.stage;
    const Tensor &op = st->op();
    std::vector<Expr> idx;
    for (const IterVar &iv : op->axes) idx.push_back(info.value.at(iv.get()));
    LoadRewriter rw(realized_, ranges_);
    Expr value =
        rw.mutate(tir::simplify(tir::substitute(info.body, root_substitution(info)), ranges_));
    const auto &leaves = st->leaf_iter_vars();
    size_t first_r = leaves.size();
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i]->reduce) {
        first_r = i;
        break;
      }
    }
    Stmt inner;
    if (op->reduce_axes.empty()) {
      inner = guarded(info, tir::Store::make(info.buffer, idx, value), true);
      for (size_t i = leaves.size(); i-- > 0;) {
        inner = wrap_loop(info, leaves[i], attach_children(info, leaves[i], inner));
      }
      return inner;
    }
    Stmt init =
        guarded(info, tir::Store::make(info.buffer, idx, tir::make_const(op->dtype(), 0)), false);
    for (size_t i = leaves.size(); i-- > first_r;) {
      if (!leaves[i]->reduce) init = wrap_loop(info, leaves[i], init);
    }
    Stmt update = guarded(
        info, tir::Store::make(info.buffer, idx, tir::Load::make(info.buffer, idx) + value), true);
    for (size_t i = leaves.size(); i-- > first_r;) {
      update = wrap_loop(info, leaves[i], attach_children(info, leaves[i], update));
    }
    inner = tir::Seq::make({init, update});
    for (size_t i = first_r; i-- > 0;) {
      inner = wrap_loop(info, leaves[i], attach_children(info, leaves[i], inner));
    }
    return inner;
  }

  const Schedule &sched_;
  std::set<const tir::BufferNode *> arg_buffers_;
  std::vector<const Stage *> order_;
  std::map<const Stage *, StageInfo> infos_;
  std::map<const tir::BufferNode *, const StageInfo *> realized_;
  tir::RangeMap ranges_;
};

}  // namespace

tir::Func to_loop_ir(const Schedule &s, const std::string &name, const std::vector<Tensor> &args) {
  for (const Tensor &t : args) {
    Stage &st = const_cast<Schedule &>(s)[t];
    if (!t->placeholder && !st.is_output()) {
      fail("lower '{}': argument '{}' is neither an input nor an output of the schedule", name,
           t->name);
    }
  }
  Lowerer l(s, args);
  tir::Func f;
  f.name = name;
  for (const Tensor &t : args) f.params.push_back(t->buffer);
  f.body = l.run();
  return f;
}

}  // namespace vacc::schedule
