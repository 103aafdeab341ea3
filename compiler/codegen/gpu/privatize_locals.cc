// privatize_locals: local buffers allocated between phases become per-thread slices or move to
// shared memory (passes.h).
#include <map>
#include <optional>

#include "passes.h"
#include "vacc/tir/arith.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/ops.h"

namespace vacc::codegen::gpu {
namespace {

// Where each loop variable of the block body ranges, and which thread axis it is bound to.
struct LoopVars {
  tir::RangeMap ranges;
  std::map<const tir::VarNode *, int> thread_axis;
};

LoopVars loop_vars(const tir::Stmt &body) {
  LoopVars lv;
  tir::for_each_stmt(body, [&](const tir::Stmt &s) {
    if (const tir::For *f = s.as<tir::For>()) {
      lv.ranges[f->var.get()] = {0, f->extent - 1};
      if (tir::is_gpu_thread(f->for_kind))
        lv.thread_axis[f->var.get()] = tir::gpu_axis(f->for_kind);
    }
  });
  return lv;
}

// Per dimension of a buffer: the thread axis and its coefficient (axis -1: no thread).
struct DimSlice {
  int axis = -1;
  int64_t coeff = 0;
  bool operator==(const DimSlice &) const = default;
};

// The slice signature of one access, or nullopt when the access is not of the private form.
std::optional<std::vector<DimSlice>> slice_of(const tir::Buffer &b,
                                              const std::vector<tir::Expr> &indices,
                                              const LoopVars &lv) {
  std::vector<DimSlice> sig(indices.size());
  for (size_t d = 0; d < indices.size(); ++d) {
    tir::LinearForm f = tir::linear_form(indices[d]);
    tir::LinearForm rest;
    rest.constant = f.constant;
    for (const auto &[atom, c] : f.terms) {
      const tir::VarNode *v = atom.as<tir::VarNode>();
      auto it = v ? lv.thread_axis.find(v) : lv.thread_axis.end();
      if (it == lv.thread_axis.end()) {
        if (tir::uses_var_if(atom, [&](const tir::VarNode *x) { return lv.thread_axis.count(x); }))
          return std::nullopt;  // a thread index inside a non-affine term
        rest.terms.emplace_back(atom, c);
        continue;
      }
      if (sig[d].axis >= 0 || c <= 0) return std::nullopt;
      sig[d] = {it->second, c};
    }
    tir::Interval r = tir::bound_of(tir::from_linear_form(rest, indices[d].dtype()), lv.ranges);
    int64_t limit = sig[d].axis >= 0 ? std::min(sig[d].coeff, b->shape[d]) : b->shape[d];
    if (!r.bounded() || r.lo < 0 || r.hi >= limit) return std::nullopt;
  }
  return sig;
}

class AccessCollector : public tir::Visitor {
 public:
  explicit AccessCollector(const tir::BufferNode *b) : b_(b) {}
  std::vector<std::vector<tir::Expr>> accesses;
  bool outside_phase = false;

 protected:
  void visit_For(const tir::For *op) override {
    bool thread = tir::is_gpu_thread(op->for_kind);
    depth_ += thread;
    Visitor::visit_For(op);
    depth_ -= thread;
  }
  void visit_Load(const tir::Load *op) override {
    record(op->buffer.get(), op->indices);
    Visitor::visit_Load(op);
  }
  void visit_Store(const tir::Store *op) override {
    record(op->buffer.get(), op->indices);
    Visitor::visit_Store(op);
  }

 private:
  void record(const tir::BufferNode *b, const std::vector<tir::Expr> &idx) {
    if (b != b_) return;
    accesses.push_back(idx);
    outside_phase |= depth_ == 0;
  }
  const tir::BufferNode *b_;
  int depth_ = 0;
};

// Rewrites accesses of `from` to the private slice `to`: each index less its thread term.
class SliceRewriter : public tir::Mutator {
 public:
  SliceRewriter(const tir::Buffer &from, const tir::Buffer &to, const LoopVars &lv)
      : from_(from), to_(to), lv_(lv) {}
  using Mutator::mutate;

 protected:
  tir::Expr mutate_Load(const tir::Load *op, const tir::Expr &self) override {
    tir::Expr e = Mutator::mutate_Load(op, self);
    const tir::Load *l = e.as<tir::Load>();
    if (l->buffer != from_) return e;
    return tir::Load::make(to_, slice(l->indices));
  }
  tir::Stmt mutate_Store(const tir::Store *op, const tir::Stmt &self) override {
    tir::Stmt s = Mutator::mutate_Store(op, self);
    const tir::Store *st = s.as<tir::Store>();
    if (st->buffer != from_) return s;
    return tir::Store::make(to_, slice(st->indices), st->value);
  }

 private:
  std::vector<tir::Expr> slice(const std::vector<tir::Expr> &indices) {
    std::vector<tir::Expr> out;
    for (const tir::Expr &i : indices) {
      tir::LinearForm f = tir::linear_form(i);
      tir::LinearForm rest;
      rest.constant = f.constant;
      for (const auto &[atom, c] : f.terms) {
        const tir::VarNode *v = atom.as<tir::VarNode>();
        if (!v || !lv_.thread_axis.count(v)) rest.terms.emplace_back(atom, c);
      }
      out.push_back(tir::simplify(tir::from_linear_form(rest, i.dtype()), lv_.ranges));
    }
    return out;
  }
  tir::Buffer from_, to_;
  const LoopVars &lv_;
};

class Privatizer : public tir::Mutator {
 public:
  Privatizer(const LoopVars &lv, const std::array<int64_t, 3> &block) : lv_(lv), block_(block) {}
  using Mutator::mutate;

 protected:
  tir::Stmt mutate_For(const tir::For *op, const tir::Stmt &self) override {
    if (tir::is_gpu_thread(op->for_kind)) return self;  // inside a phase: already per thread
    return Mutator::mutate_For(op, self);
  }
  tir::Stmt mutate_Allocate(const tir::Allocate *op, const tir::Stmt &self) override {
    tir::Stmt body = mutate(op->body);
    const tir::Buffer &b = op->buffer;
    if (b->scope != tir::Scope::kLocal) {
      return body.same_as(op->body) ? self : tir::Allocate::make(b, body, op->base);
    }
    if (std::optional<std::vector<DimSlice>> sig = common_slice(b, body)) {
      std::vector<int64_t> shape = b->shape;
      for (size_t d = 0; d < shape.size(); ++d) {
        if ((*sig)[d].axis >= 0) shape[d] = std::min((*sig)[d].coeff, shape[d]);
      }
      tir::Buffer priv = tir::make_buffer(b->name, b->dtype, shape, tir::Scope::kLocal);
      return tir::Allocate::make(priv, SliceRewriter(b, priv, lv_).mutate(body));
    }
    tir::Buffer shared = tir::make_buffer(b->name, b->dtype, b->shape, tir::Scope::kShared);
    return tir::Allocate::make(shared, tir::replace_buffers(body, {{b, shared}}));
  }

 private:
  // The slice every access of b shares, covering every thread axis the block uses.
  std::optional<std::vector<DimSlice>> common_slice(const tir::Buffer &b, const tir::Stmt &body) {
    AccessCollector ac(b.get());
    ac.visit(body);
    if (ac.outside_phase || ac.accesses.empty()) return std::nullopt;
    std::optional<std::vector<DimSlice>> common;
    for (const auto &idx : ac.accesses) {
      std::optional<std::vector<DimSlice>> sig = slice_of(b, idx, lv_);
      if (!sig || (common && *sig != *common)) return std::nullopt;
      common = sig;
    }
    std::array<bool, 3> covered{};
    for (const DimSlice &d : *common) {
      if (d.axis < 0) continue;
      if (covered[d.axis]) return std::nullopt;  // one axis in two dimensions
      covered[d.axis] = true;
    }
    for (int a = 0; a < 3; ++a) {
      if (block_[a] > 1 && !covered[a]) return std::nullopt;
    }
    return common;
  }
  const LoopVars &lv_;
  std::array<int64_t, 3> block_;
};

}  // namespace

tir::Stmt privatize_locals(const tir::Stmt &body, const std::array<int64_t, 3> &block,
                           const tir::RangeMap &grid) {
  if (block[0] * block[1] * block[2] == 1) return body;  // one thread: every buffer is its own
  LoopVars lv = loop_vars(body);
  lv.ranges.insert(grid.begin(), grid.end());
  return Privatizer(lv, block).mutate(body);
}

}  // namespace vacc::codegen::gpu
