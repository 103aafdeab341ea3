// Schedules: how a compute definition becomes loops. One Stage per operation holds its
// leaf loop order and the split/fuse relations that derive leaves from the operation's axes,
// where it is computed (at the root, inlined into its consumers, or at a loop of another
// stage), the memory scope it is realized in, and per-loop annotations (unroll, vectorize,
// parallel, virtual thread, tensorize, pragma). Misuse (splitting an axis that is no longer a
// leaf, binding a reduction axis to a virtual thread, ...) throws vacc::Error naming the
// stage and the axis.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vacc/te/tensor.h"
#include "vacc/tir/node.h"

namespace vacc::schedule {

using te::IterVar;
using te::Tensor;

// parent = outer * factor + inner (split), or fused = outer * extent(inner) + inner (fuse).
struct Relation {
  enum Kind { kSplit, kFuse } kind = kSplit;
  IterVar parent, outer, inner, fused;
  int64_t factor = 1;
};

enum class Attach { kRoot, kInline, kAt };

class Stage {
 public:
  const std::string &name() const { return op_->name; }
  const Tensor &op() const { return op_; }
  const std::vector<IterVar> &axis() const { return op_->axes; }
  const std::vector<IterVar> &reduce_axis() const { return op_->reduce_axes; }
  const std::vector<IterVar> &leaf_iter_vars() const { return leaves_; }

  // outer, inner with inner of extent `factor` (a non-dividing factor leaves a guard).
  std::pair<IterVar, IterVar> split(const IterVar &iv, int64_t factor);
  std::pair<IterVar, IterVar> split_nparts(const IterVar &iv, int64_t nparts);
  IterVar fuse(const IterVar &outer, const IterVar &inner);
  // Puts the listed leaves in this order, in the positions they occupied.
  void reorder(const std::vector<IterVar> &order);
  // Splits x and y and orders them x.outer, y.outer, x.inner, y.inner (returned in order).
  std::array<IterVar, 4> tile(const IterVar &x, const IterVar &y, int64_t fx, int64_t fy);

  void compute_at(Stage &parent, const IterVar &iv);
  void compute_inline();
  void compute_root();
  // The memory scope the stage's result lives in ("inp", "wgt", "acc", ...).
  void set_scope(tir::Scope scope);

  void unroll(const IterVar &iv);
  void vectorize(const IterVar &iv);
  void parallel(const IterVar &iv);
  // Binds a data-parallel leaf to a virtual thread (inject_virtual_threads interleaves them).
  void bind_vthread(const IterVar &iv);
  // Binds a data-parallel leaf to a GPU grid or thread-block axis ("blockIdx.x", ...,
  // "threadIdx.z"): on a GPU each block or thread runs its own iteration (codegen/gpu).
  void bind(const IterVar &iv, const std::string &gpu_axis);
  // The loop nest from `iv` inward is replaced by the named tensor intrinsic.
  void tensorize(const IterVar &iv, const std::string &intrin);
  // Marks the nest from `iv` inward: "dma_copy" (a copy between DRAM and a scope) or "alu".
  void pragma(const IterVar &iv, const std::string &name);

  // ---- read by lowering
  Attach attach() const { return attach_; }
  const Stage *attach_stage() const { return attach_stage_; }
  const IterVar &attach_iv() const { return attach_iv_; }
  tir::Scope scope() const { return scope_; }
  const std::vector<Relation> &relations() const { return relations_; }
  tir::ForKind for_kind(const IterVar &iv) const;
  std::string annotation(const std::map<const te::IterVarNode *, std::string> &m,
                         const IterVar &iv) const;
  const std::map<const te::IterVarNode *, std::string> &pragmas() const { return pragma_; }
  const std::map<const te::IterVarNode *, std::string> &tensorized() const { return tensorize_; }
  bool is_output() const { return output_; }
  bool is_leaf(const IterVar &iv) const;

 private:
  friend class Schedule;
  size_t leaf_index(const IterVar &iv, const char *what) const;
  void replace_op(Tensor op) { op_ = std::move(op); }

  Tensor op_;
  std::vector<IterVar> leaves_;
  std::vector<IterVar> all_;  // every iter var ever created for the stage
  std::vector<Relation> relations_;
  Attach attach_ = Attach::kRoot;
  const Stage *attach_stage_ = nullptr;
  IterVar attach_iv_;
  tir::Scope scope_ = tir::Scope::kGlobal;
  std::map<const te::IterVarNode *, tir::ForKind> kinds_;
  std::map<const te::IterVarNode *, std::string> pragma_, tensorize_;
  bool output_ = false;
};

class Schedule {
 public:
  // Stages for every operation the outputs depend on, producers first.
  explicit Schedule(const std::vector<Tensor> &outputs);
  Stage &operator[](const Tensor &t);
  const std::vector<std::unique_ptr<Stage>> &stages() const { return stages_; }

  // A new stage copying `t` into `scope`; the readers now read the copy.
  Tensor cache_read(const Tensor &t, tir::Scope scope, const std::vector<Tensor> &readers);
  // A new stage computing `t`'s body in `scope`; `t` becomes a copy of it.
  Tensor cache_write(const Tensor &t, tir::Scope scope);

  // The stage whose current operation writes `buffer` (null for none).
  Stage *stage_of(const tir::BufferNode *buffer) const;

 private:
  std::vector<std::unique_ptr<Stage>> stages_;
};

}  // namespace vacc::schedule
