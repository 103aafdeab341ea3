// block_shape: the thread-block shape of a kernel's block body, and the rules that make the
// sequential meaning of its phases the parallel one.
#include "passes.h"
#include "vacc/codegen/gpu/ptx.h"
#include "vacc/support/error.h"
#include "vacc/tir/functor.h"

namespace vacc::codegen::gpu {
namespace {

class PhaseChecker : public tir::Visitor {
 public:
  PhaseChecker(const std::string &func, bool has_phases) : func_(func), has_phases_(has_phases) {}
  std::array<int64_t, 3> block{1, 1, 1};

 protected:
  void visit_For(const tir::For *op) override {
    if (tir::is_gpu_block(op->for_kind)) {
      fail(
          "GPU backend: {}: loop '{}' is bound to {} inside a kernel's blocks; bind only the "
          "outermost loops of a nest to blockIdx",
          func_, op->var->name, tir::for_kind_name(op->for_kind));
    }
    if (!tir::is_gpu_thread(op->for_kind)) return Visitor::visit_For(op);
    int axis = tir::gpu_axis(op->for_kind);
    if (bound_[axis]) {
      fail(
          "GPU backend: {}: loop '{}' binds {} inside another loop bound to it; a phase binds "
          "each thread axis once",
          func_, op->var->name, tir::for_kind_name(op->for_kind));
    }
    bound_[axis] = true;
    block[axis] = std::max(block[axis], op->extent);
    Visitor::visit_For(op);
    bound_[axis] = false;
  }
  void visit_Store(const tir::Store *op) override {
    if (has_phases_ && !in_phase()) {
      fail(
          "GPU backend: {}: the store to '{}' lies outside every threadIdx loop, so every "
          "thread of a block would run it; bind a loop around it to threadIdx",
          func_, op->buffer->name);
    }
    Visitor::visit_Store(op);
  }
  void visit_Allocate(const tir::Allocate *op) override {
    if (op->buffer->scope == tir::Scope::kShared && in_phase()) {
      fail(
          "GPU backend: {}: shared buffer '{}' is allocated inside a threadIdx loop; compute it "
          "at a loop outside the thread loops so the block shares one copy",
          func_, op->buffer->name);
    }
    Visitor::visit_Allocate(op);
  }

 private:
  bool in_phase() const { return bound_[0] || bound_[1] || bound_[2]; }
  const std::string &func_;
  bool has_phases_;
  std::array<bool, 3> bound_{};
};

}  // namespace

std::array<int64_t, 3> block_shape(const tir::Stmt &body, const std::string &func) {
  bool has_phases = false;
  tir::for_each_stmt(body, [&](const tir::Stmt &s) {
    if (const tir::For *f = s.as<tir::For>()) has_phases |= tir::is_gpu_thread(f->for_kind);
  });
  PhaseChecker c(func, has_phases);
  c.visit(body);
  int64_t threads = c.block[0] * c.block[1] * c.block[2];
  if (threads > kMaxThreadsPerBlock) {
    fail("GPU backend: {}: a block of {}x{}x{} = {} threads; a block holds at most {}", func,
         c.block[0], c.block[1], c.block[2], threads, kMaxThreadsPerBlock);
  }
  return c.block;
}

tir::Stmt make_barrier() {
  return tir::Attr::make(kBarrierKey, kBarrierValue, tir::Seq::make({}));
}

bool is_barrier(const tir::Stmt &s) {
  const tir::Attr *a = s.as<tir::Attr>();
  return a && a->key == kBarrierKey && a->value == kBarrierValue;
}

}  // namespace vacc::codegen::gpu
