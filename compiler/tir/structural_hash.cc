// structural_hash (equal.h): a Visitor that feeds every field that structural_equal compares into
// one 64-bit FNV-1a hash. Variables and buffers are numbered by first appearance, so two Funcs that
// differ only in names (or in the identity of their objects) hash the same.
#include <cstring>
#include <unordered_map>

#include "vacc/tir/equal.h"
#include "vacc/tir/functor.h"

namespace vacc::tir {
namespace {

class Hasher : public tir::Visitor {
 public:
  uint64_t h = 1469598103934665603ull;

  void mix(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  void mix_type(tir::DataType t) { mix((uint64_t{t.code} << 8) | static_cast<uint64_t>(t.bits)); }
  void buffer(const tir::Buffer &b) {
    if (!b) {
      mix(~0ull);
      return;
    }
    auto [it, fresh] = bufs_.emplace(b.get(), bufs_.size());
    mix(it->second);
    if (!fresh) return;
    mix_type(b->dtype);
    mix(static_cast<uint64_t>(b->scope));
    mix(b->shape.size());
    for (int64_t d : b->shape) mix(static_cast<uint64_t>(d));
  }

  void visit(const tir::Expr &e) override {
    mix(static_cast<uint64_t>(e.kind()) + 1000);
    mix_type(e.dtype());
    Visitor::visit(e);
  }
  void visit(const tir::Stmt &s) override {
    if (!s.defined()) {
      mix(7777);
      return;
    }
    mix(static_cast<uint64_t>(s.kind()) + 2000);
    Visitor::visit(s);
  }

 protected:
  void visit_IntImm(const tir::IntImm *op) override { mix(static_cast<uint64_t>(op->value)); }
  void visit_FloatImm(const tir::FloatImm *op) override {
    uint64_t bits;
    std::memcpy(&bits, &op->value, sizeof bits);
    mix(bits);
  }
  void visit_Call(const tir::Call *op) override {
    mix(static_cast<uint64_t>(op->op));
    Visitor::visit_Call(op);
  }
  void visit_Var(const tir::VarNode *op) override {
    auto it = vars_.emplace(op, vars_.size()).first;
    mix(it->second);
  }
  void visit_Load(const tir::Load *op) override {
    buffer(op->buffer);
    Visitor::visit_Load(op);
  }
  void visit_Store(const tir::Store *op) override {
    buffer(op->buffer);
    Visitor::visit_Store(op);
  }
  void visit_Prefetch(const tir::Prefetch *op) override {
    buffer(op->buffer);
    Visitor::visit_Prefetch(op);
  }
  void visit_For(const tir::For *op) override {
    visit_Var(op->var.get());
    mix(static_cast<uint64_t>(op->extent));
    mix(static_cast<uint64_t>(op->for_kind));
    Visitor::visit_For(op);
  }
  void visit_Allocate(const tir::Allocate *op) override {
    buffer(op->buffer);
    mix(static_cast<uint64_t>(op->base));
    Visitor::visit_Allocate(op);
  }
  void visit_Attr(const tir::Attr *op) override {
    mix(std::hash<std::string>()(op->key));
    mix(std::hash<std::string>()(op->value));
    Visitor::visit_Attr(op);
  }
  void visit_IfThenElse(const tir::IfThenElse *op) override {
    mix(op->else_case.defined());
    Visitor::visit_IfThenElse(op);
  }

 private:
  std::unordered_map<const tir::VarNode *, uint64_t> vars_;
  std::unordered_map<const tir::BufferNode *, uint64_t> bufs_;
};

}  // namespace

uint64_t structural_hash(const tir::Func &f) {
  Hasher h;
  h.mix(f.params.size());
  for (const tir::Buffer &b : f.params) h.buffer(b);
  h.visit(f.body);
  return h.h;
}

}  // namespace vacc::tir
