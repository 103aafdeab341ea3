#include "vacc/tir/passes/plan_scratchpads.h"

#include "vacc/intrin/intrin.h"
#include "vacc/support/error.h"
#include "vacc/tir/functor.h"

namespace vacc::tir {
namespace {

class Planner : public Mutator {
 public:
  Planner(const Func &f, const isa::HwConfig &c) : func_(f), config_(c) {}
  using Mutator::mutate;

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
  int64_t top_[isa::kNumMemIds] = {};
};

}  // namespace

Func plan_scratchpads(const Func &f, const isa::HwConfig &config) {
  return {f.name, f.params, Planner(f, config).mutate(f.body)};
}

}  // namespace vacc::tir
