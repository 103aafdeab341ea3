#include "vacc/schedule/schedule.h"

#include <algorithm>
#include <functional>
#include <set>

#include "vacc/support/error.h"
#include "vacc/tir/functor.h"

namespace vacc::schedule {
namespace {

class BufferReplacer : public tir::Mutator {
 public:
  BufferReplacer(const tir::BufferNode *from, tir::Buffer to) : from_(from), to_(std::move(to)) {}
  using Mutator::mutate;

 protected:
  tir::Expr mutate_Load(const tir::Load *op, const tir::Expr &self) override {
    std::vector<tir::Expr> idx;
    bool changed = mutate_list(op->indices, &idx);
    if (op->buffer.get() == from_) return tir::Load::make(to_, idx);
    return changed ? tir::Load::make(op->buffer, idx) : self;
  }

 private:
  const tir::BufferNode *from_;
  tir::Buffer to_;
};

std::vector<IterVar> fresh_axes(const std::vector<IterVar> &axes) {
  std::vector<IterVar> out;
  for (const IterVar &iv : axes)
    out.push_back(te::make_iter_var(iv->var->name, iv->extent, iv->reduce));
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------- Stage

bool Stage::is_leaf(const IterVar &iv) const {
  return std::find(leaves_.begin(), leaves_.end(), iv) != leaves_.end();
}

size_t Stage::leaf_index(const IterVar &iv, const char *what) const {
  auto it = std::find(leaves_.begin(), leaves_.end(), iv);
  if (!iv || it == leaves_.end()) {
    fail(
        "schedule: {} of stage '{}': axis '{}' is not a leaf loop of this stage (it was split, "
        "fused, or belongs to another stage); use the axes returned by split/fuse",
        what, name(), iv ? iv->var->name : "<null>");
  }
  return it - leaves_.begin();
}

std::pair<IterVar, IterVar> Stage::split(const IterVar &iv, int64_t factor) {
  size_t i = leaf_index(iv, "split");
  if (factor <= 0)
    fail("schedule: split of '{}' in stage '{}': factor {} must be positive", iv->var->name, name(),
         factor);
  int64_t outer_ext = (iv->extent + factor - 1) / factor;
  IterVar outer = te::make_iter_var(iv->var->name + ".o", outer_ext, iv->reduce);
  IterVar inner = te::make_iter_var(iv->var->name + ".i", factor, iv->reduce);
  Relation r;
  r.kind = Relation::kSplit;
  r.parent = iv;
  r.outer = outer;
  r.inner = inner;
  r.factor = factor;
  relations_.push_back(r);
  leaves_[i] = outer;
  leaves_.insert(leaves_.begin() + i + 1, inner);
  all_.push_back(outer);
  all_.push_back(inner);
  return {outer, inner};
}

std::pair<IterVar, IterVar> Stage::split_nparts(const IterVar &iv, int64_t nparts) {
  if (nparts <= 0)
    fail("schedule: split_nparts of '{}' in stage '{}': {} parts", iv->var->name, name(), nparts);
  return split(iv, (iv->extent + nparts - 1) / nparts);
}

IterVar Stage::fuse(const IterVar &outer, const IterVar &inner) {
  size_t i = leaf_index(outer, "fuse"), j = leaf_index(inner, "fuse");
  if (j != i + 1)
    fail("schedule: fuse in stage '{}': '{}' must directly enclose '{}'", name(), outer->var->name,
         inner->var->name);
  if (outer->reduce != inner->reduce) {
    fail("schedule: fuse in stage '{}' mixes a reduction axis and a data axis ('{}', '{}')", name(),
         outer->var->name, inner->var->name);
  }
  IterVar fused = te::make_iter_var(outer->var->name + "." + inner->var->name + ".f",
                                    outer->extent * inner->extent, outer->reduce);
  Relation r;
  r.kind = Relation::kFuse;
  r.outer = outer;
  r.inner = inner;
  r.fused = fused;
  relations_.push_back(r);
  leaves_[i] = fused;
  leaves_.erase(leaves_.begin() + j);
  all_.push_back(fused);
  return fused;
}

void Stage::reorder(const std::vector<IterVar> &order) {
  std::vector<size_t> pos;
  for (const IterVar &iv : order) pos.push_back(leaf_index(iv, "reorder"));
  std::set<size_t> uniq(pos.begin(), pos.end());
  if (uniq.size() != pos.size())
    fail("schedule: reorder of stage '{}' names an axis twice", name());
  std::vector<size_t> sorted(uniq.begin(), uniq.end());
  std::vector<IterVar> next = leaves_;
  for (size_t k = 0; k < order.size(); ++k) next[sorted[k]] = order[k];
  leaves_ = next;
}

std::array<IterVar, 4> Stage::tile(const IterVar &x, const IterVar &y, int64_t fx, int64_t fy) {
  auto [xo, xi] = split(x, fx);
  auto [yo, yi] = split(y, fy);
  reorder({xo, yo, xi, yi});
  return {xo, yo, xi, yi};
}

void Stage::compute_at(Stage &parent, const IterVar &iv) {
  parent.leaf_index(iv, "compute_at");
  if (&parent == this) fail("schedule: stage '{}' cannot be computed at itself", name());
  if (op_->placeholder) fail("schedule: placeholder '{}' cannot be computed", name());
  attach_ = Attach::kAt;
  attach_stage_ = &parent;
  attach_iv_ = iv;
}

void Stage::compute_inline() {
  if (op_->placeholder || !op_->reduce_axes.empty()) {
    fail("schedule: stage '{}' cannot be inlined: only element-wise computes can", name());
  }
  if (output_) fail("schedule: stage '{}' is an output and cannot be inlined", name());
  attach_ = Attach::kInline;
}

void Stage::compute_root() {
  attach_ = Attach::kRoot;
  attach_stage_ = nullptr;
  attach_iv_ = nullptr;
}

void Stage::set_scope(tir::Scope scope) {
  if (op_->placeholder || output_) {
    fail(
        "schedule: stage '{}' is an input or output and stays in DRAM; cache_read or "
        "cache_write it into scope '{}'",
        name(), tir::scope_name(scope));
  }
  scope_ = scope;
}

void Stage::unroll(const IterVar &iv) {
  leaf_index(iv, "unroll");
  kinds_[iv.get()] = tir::ForKind::kUnrolled;
}
void Stage::vectorize(const IterVar &iv) {
  leaf_index(iv, "vectorize");
  kinds_[iv.get()] = tir::ForKind::kVectorized;
}
void Stage::parallel(const IterVar &iv) {
  leaf_index(iv, "parallel");
  kinds_[iv.get()] = tir::ForKind::kParallel;
}
void Stage::bind_vthread(const IterVar &iv) {
  leaf_index(iv, "bind_vthread");
  if (iv->reduce) {
    fail(
        "schedule: stage '{}': '{}' is (split from) a reduction axis; a virtual thread must "
        "split a data-parallel axis, since threads may not share an accumulator",
        name(), iv->var->name);
  }
  kinds_[iv.get()] = tir::ForKind::kVThread;
}
void Stage::bind(const IterVar &iv, const std::string &gpu_axis) {
  leaf_index(iv, "bind");
  tir::ForKind kind;
  if (!tir::parse_gpu_binding(gpu_axis, &kind)) {
    fail(
        "schedule: stage '{}': cannot bind '{}' to '{}'; GPU axes are blockIdx.x|y|z and "
        "threadIdx.x|y|z",
        name(), iv->var->name, gpu_axis);
  }
  if (iv->reduce) {
    fail(
        "schedule: stage '{}': '{}' is (split from) a reduction axis; bind it to {} only through "
        "a cross-thread reduction written in loop IR, since blocks and threads may not share an "
        "accumulator",
        name(), iv->var->name, gpu_axis);
  }
  kinds_[iv.get()] = kind;
}
void Stage::tensorize(const IterVar &iv, const std::string &intrin) {
  leaf_index(iv, "tensorize");
  tensorize_[iv.get()] = intrin;
}
void Stage::pragma(const IterVar &iv, const std::string &p) {
  leaf_index(iv, "pragma");
  if (p != "dma_copy" && p != "alu") {
    fail("schedule: pragma '{}' on stage '{}' is unknown; use \"dma_copy\" or \"alu\"", p, name());
  }
  pragma_[iv.get()] = p;
}

tir::ForKind Stage::for_kind(const IterVar &iv) const {
  auto it = kinds_.find(iv.get());
  return it == kinds_.end() ? tir::ForKind::kSerial : it->second;
}

std::string Stage::annotation(const std::map<const te::IterVarNode *, std::string> &m,
                              const IterVar &iv) const {
  auto it = m.find(iv.get());
  return it == m.end() ? "" : it->second;
}

// ------------------------------------------------------------------------------- Schedule

Schedule::Schedule(const std::vector<Tensor> &outputs) {
  std::set<const te::OperationNode *> seen;
  std::function<void(const Tensor &)> visit = [&](const Tensor &t) {
    if (!seen.insert(t.get()).second) return;
    for (const Tensor &in : t->inputs) visit(in);
    auto s = std::make_unique<Stage>();
    s->op_ = t;
    s->leaves_ = t->axes;
    s->leaves_.insert(s->leaves_.end(), t->reduce_axes.begin(), t->reduce_axes.end());
    s->all_ = s->leaves_;
    stages_.push_back(std::move(s));
  };
  for (const Tensor &t : outputs) visit(t);
  for (const Tensor &t : outputs) (*this)[t].output_ = true;
}

Stage &Schedule::operator[](const Tensor &t) {
  for (auto &s : stages_) {
    if (s->op_.get() == t.get() || s->op_->buffer.get() == t->buffer.get()) return *s;
  }
  fail("schedule: tensor '{}' is not part of this schedule", t->name);
}

Stage *Schedule::stage_of(const tir::BufferNode *buffer) const {
  for (auto &s : stages_) {
    if (s->op_->buffer.get() == buffer) return s.get();
  }
  return nullptr;
}

Tensor Schedule::cache_read(const Tensor &t, tir::Scope scope, const std::vector<Tensor> &readers) {
  Stage &src = (*this)[t];
  std::string name = t->name + "." + tir::scope_name(scope);
  std::vector<IterVar> axes = fresh_axes(src.op()->axes);
  std::vector<tir::Expr> idx;
  for (const IterVar &iv : axes) idx.push_back(iv->var);
  tir::Buffer buf = tir::make_buffer(name, t->dtype(), t->shape());
  Tensor copy = te::make_compute(name, buf, axes, {}, (*src.op())(idx));
  for (const Tensor &r : readers) {
    Stage &rs = (*this)[r];
    BufferReplacer rep(t->buffer.get(), buf);
    tir::Expr body = rep.mutate(rs.op()->body);
    if (body.same_as(rs.op()->body)) {
      fail("schedule: cache_read of '{}': stage '{}' does not read it", t->name, rs.name());
    }
    rs.replace_op(te::with_body(rs.op(), body));
  }
  auto s = std::make_unique<Stage>();
  s->op_ = copy;
  s->leaves_ = copy->axes;
  s->all_ = s->leaves_;
  s->scope_ = scope;
  auto pos =
      std::find_if(stages_.begin(), stages_.end(), [&](const auto &p) { return p.get() == &src; });
  stages_.insert(pos + 1, std::move(s));
  return copy;
}

Tensor Schedule::cache_write(const Tensor &t, tir::Scope scope) {
  Stage &dst = (*this)[t];
  if (dst.op()->placeholder) fail("schedule: cache_write of placeholder '{}'", t->name);
  if (!dst.relations_.empty()) {
    fail("schedule: cache_write of '{}' must come before splitting or fusing its axes", t->name);
  }
  const Tensor &op = dst.op();
  std::vector<IterVar> axes = fresh_axes(op->axes), raxes = fresh_axes(op->reduce_axes);
  std::vector<std::pair<tir::Var, tir::Expr>> sub;
  for (size_t i = 0; i < axes.size(); ++i) sub.emplace_back(op->axes[i]->var, axes[i]->var);
  for (size_t i = 0; i < raxes.size(); ++i)
    sub.emplace_back(op->reduce_axes[i]->var, raxes[i]->var);
  std::string name = t->name + "." + tir::scope_name(scope);
  tir::Buffer buf = tir::make_buffer(name, t->dtype(), t->shape());
  Tensor inner = te::make_compute(name, buf, axes, raxes, tir::substitute(op->body, sub));
  std::vector<tir::Expr> idx;
  for (const IterVar &iv : op->axes) idx.push_back(iv->var);
  dst.replace_op(te::make_compute(op->name, op->buffer, op->axes, {}, (*inner)(idx)));
  dst.leaves_ = op->axes;
  dst.all_ = dst.leaves_;
  auto s = std::make_unique<Stage>();
  s->op_ = inner;
  s->leaves_ = axes;
  s->leaves_.insert(s->leaves_.end(), raxes.begin(), raxes.end());
  s->all_ = s->leaves_;
  s->scope_ = scope;
  auto pos =
      std::find_if(stages_.begin(), stages_.end(), [&](const auto &p) { return p.get() == &dst; });
  stages_.insert(pos, std::move(s));
  return inner;
}

}  // namespace vacc::schedule
