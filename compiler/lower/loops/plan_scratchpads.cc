#include "vacc/lower/loops/plan_scratchpads.h"

#include "vacc/intrin/intrin.h"
#include "vacc/support/error.h"
#include "vacc/tir/functor.h"

namespace vacc::tir {
namespace {

// Whether the function has ACC buffers of more than one virtual thread.
bool threads_share_acc(const Stmt &body) {
  bool found = false;
  for_each_stmt(body, [&](const Stmt &s) {
    if (const Allocate *a = s.as<Allocate>())
      found |= a->buffer->scope == Scope::kAcc && a->buffer->vthread >= 1;
  });
  return found;
}

class Planner : public Mutator {
 public:
  // banked: ACC buffers of virtual thread t stack up from the start of ACC bank t mod 2 (its
  // lower or upper half; shared buffers in bank 0), so the codegen can let one thread's
  // requantization run on the ALU beside another thread's GEMMs (isa/README.md, "Overlap").
  Planner(const Func &f, const isa::HwConfig &c, bool banked)
      : func_(f), config_(c), banked_(banked) {
    acc_top_[1] = c.acc_bank_depth();
  }
  using Mutator::mutate;

  // Banked planning only: whether some thread's ACC buffers did not fit its bank (the plan is
  // then unusable and plan_scratchpads plans again without banks).
  bool bank_full() const { return bank_full_; }

 protected:
  Stmt mutate_Allocate(const Allocate *op, const Stmt &self) override {
    const Buffer &b = op->buffer;
    if (!is_scratchpad(b->scope) || b->scope == Scope::kUop)
      return Mutator::mutate_Allocate(op, self);
    isa::MemId mem = mem_of_scope(b->scope);
    std::vector<int64_t> tile = intrin::tile_shape(config_, b->scope);
    size_t r = b->shape.size();
    if (r < 2 || b->shape[r - 2] != tile[0] || b->shape[r - 1] != tile[1]) {
      fail("{}: buffer '{}' in the {} scratchpad must end in the config's {}x{} tile", func_.name,
           b->name, scope_name(b->scope), tile[0], tile[1]);
    }
    if (b->dtype != intrin::scope_dtype(config_, b->scope)) {
      fail("{}: buffer '{}' holds {} but the {} scratchpad holds {}", func_.name, b->name,
           b->dtype.str(), scope_name(b->scope), intrin::scope_dtype(config_, b->scope).str());
    }
    int m = static_cast<int>(mem);
    if (banked_ && mem == isa::MemId::kAcc) {
      const int bank = b->vthread >= 0 ? b->vthread % 2 : 0;
      const int64_t base = acc_top_[bank];
      const int64_t end = int64_t{config_.acc_bank_depth()} * (bank + 1);
      bank_full_ |= base + b->tiles() > end;
      acc_top_[bank] += b->tiles();
      Stmt body = mutate(op->body);
      acc_top_[bank] -= b->tiles();
      return Allocate::make(b, body, base);
    }
    int64_t base = top_[m];
    int64_t depth = config_.depth(mem);
    if (base + b->tiles() > depth) {
      int64_t tb = config_.tile_bytes(mem);
      fail(
          "{}: scratchpad overflow: buffer '{}' needs {} {} tiles ({} bytes) on top of {} tiles "
          "already live, but the {} scratchpad holds {} tiles ({} KiB, config '{}'); use smaller "
          "tiles (split factors) or fewer virtual threads",
          func_.name, b->name, b->tiles(), scope_name(b->scope), b->tiles() * tb, base,
          scope_name(b->scope), depth, depth * tb / 1024, config_.name);
    }
    top_[m] += b->tiles();
    Stmt body = mutate(op->body);
    top_[m] -= b->tiles();
    return Allocate::make(b, body, base);
  }

 private:
  const Func &func_;
  const isa::HwConfig &config_;
  bool banked_;
  int64_t top_[isa::kNumMemIds] = {};
  int64_t acc_top_[2] = {0, 0};
  bool bank_full_ = false;
};

}  // namespace

Func plan_scratchpads(const Func &f, const isa::HwConfig &config) {
  if (threads_share_acc(f.body)) {
    Planner banked(f, config, /*banked=*/true);
    Stmt body = banked.mutate(f.body);
    if (!banked.bank_full()) return {f.name, f.params, body};
    // Some thread's ACC buffers exceed half of ACC: plan without banks (no GEMM/ALU overlap).
  }
  return {f.name, f.params, Planner(f, config, /*banked=*/false).mutate(f.body)};
}

}  // namespace vacc::tir
