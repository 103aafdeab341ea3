#include "vacc/lower/loops/lower_dma_copies.h"

#include "vacc/intrin/intrin.h"
#include "vacc/support/error.h"
#include "vacc/tir/arith.h"
#include "vacc/tir/equal.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/ops.h"
#include "vacc/tir/printer.h"

namespace vacc::tir {
namespace {

struct Loop {
  Var var;
  int64_t extent;
};

Expr c32(int64_t v) {
  return make_const(int32(), v);
}

// Flat tile index of an access (leading dimensions only).
Expr tile_of(const Buffer &b, const std::vector<Expr> &idx) {
  Expr t = 0;
  int64_t stride = 1;
  for (size_t k = idx.size() - 2; k-- > 0;) {
    t = t + idx[k] * c32(stride);
    stride *= b->shape[k];
  }
  return simplify(t);
}

// Bounds lo <= v < hi collected from guard conditions on one loop variable.
struct DimBounds {
  std::vector<Expr> lower, upper;
};

class DmaLowering : public Mutator {
 public:
  explicit DmaLowering(const isa::HwConfig &c) : config_(c) {}
  using Mutator::mutate;

 protected:
  Stmt mutate_Attr(const Attr *op, const Stmt &self) override {
    if (op->key != "pragma" || op->value != "dma_copy") return Mutator::mutate_Attr(op, self);
    return lower(op->body);
  }

 private:
  Stmt lower(const Stmt &nest) {
    std::vector<Loop> loops;
    Stmt cur = nest;
    while (const For *f = cur.as<For>()) {
      loops.push_back({f->var, f->extent});
      cur = f->body;
    }
    std::vector<Expr> store_guards;
    while (const IfThenElse *g = cur.as<IfThenElse>()) {
      if (g->else_case.defined()) fail("dma_copy: guarded copy with an else branch");
      split_conj(g->cond, &store_guards);
      cur = g->then_case;
    }
    const Store *st = cur.as<Store>();
    if (!st) {
      fail(
          "dma_copy at loop '{}': the marked nest does not end in a single copy statement (is a "
          "stage computed inside the marked loop? mark a loop inside the compute_at point)",
          loops.empty() ? "?" : loops[0].var->name);
    }
    const Buffer &dst = st->buffer;
    std::vector<Expr> load_guards;
    Expr v = st->value;
    while (const Select *s = v.as<Select>()) {
      if (!is_const(s->f, 0))
        fail("dma_copy into '{}': a select that is not zero padding", dst->name);
      split_conj(s->cond, &load_guards);
      v = s->t;
    }
    bool narrowing = false;
    if (const Cast *c = v.as<Cast>()) {
      narrowing = true;
      v = c->value;
    }
    const Load *ld = v.as<Load>();
    if (!ld) {
      fail("dma_copy into '{}': the value `{}` is not a copy of another buffer", dst->name,
           to_string(st->value));
    }
    const Buffer &src = ld->buffer;
    // ACC -> INP is a STORE INP (extensions.store_inp): a layer's result kept on chip as the
    // next GEMMs' input; its destination plays the DRAM side's part, an index into INP.
    const bool to_inp = src->scope == Scope::kAcc && dst->scope == Scope::kInp;
    if (to_inp && !config_.store_inp)
      fail(
          "dma_copy from '{}' (acc) to '{}' (inp): keeping a result on chip needs STORE INP; set "
          "extensions.store_inp: true in the config",
          src->name, dst->name);
    bool is_load = !to_inp && dst->scope != Scope::kGlobal;
    const Buffer &sram = is_load ? dst : src;
    const Buffer &dram = is_load ? src : dst;
    const std::vector<Expr> &sidx = is_load ? st->indices : ld->indices;
    const std::vector<Expr> &didx = is_load ? ld->indices : st->indices;
    if (!is_scratchpad(sram->scope) || sram->scope == Scope::kUop ||
        (dram->scope != Scope::kGlobal && !to_inp)) {
      fail(
          "dma_copy from '{}' ({}) to '{}' ({}): a DMA copies between DRAM and the inp, wgt or "
          "acc scratchpad",
          src->name, scope_name(src->scope), dst->name, scope_name(dst->scope));
    }
    if (!is_load && sram->scope != Scope::kAcc) {
      fail("dma_copy to '{}': only the acc scratchpad can be stored to DRAM", dram->name);
    }
    check_tile(sram, dram);
    if (is_load && (narrowing || !load_guards.empty()) && !store_guards.empty()) {
      fail("dma_copy into '{}': a load cannot skip elements; guards must be zero padding",
           dst->name);
    }
    if (!is_load) {
      if (!load_guards.empty()) fail("dma_copy to '{}': a store cannot pad", dram->name);
      const int bits = to_inp ? config_.inp_bits : config_.out_bits();
      if (!narrowing || dram->dtype.bits != bits) {
        fail(
            "dma_copy to '{}': a store narrows the accumulator to the {}-bit {}: write "
            "`int{}(...)` of the acc value and make '{}' int{}",
            dram->name, bits, to_inp ? "input" : "output", bits, dram->name, bits);
      }
    }
    if (loops.size() < 2) fail("dma_copy of '{}': the nest must walk whole tiles", dst->name);
    // The two innermost loops walk the tile on both sides.
    size_t n = loops.size();
    for (const auto *idx : {&sidx, &didx}) {
      size_t r = idx->size();
      for (size_t k = 0; k < 2; ++k) {
        Expr e = simplify((*idx)[r - 2 + k]);
        if (e.get() != static_cast<const ExprNode *>(loops[n - 2 + k].var.get())) {
          fail(
              "dma_copy of '{}': index {} is `{}` where the tile loop '{}' was expected (the two "
              "innermost loops must walk one {}x{} tile)",
              dst->name, r - 2 + k, to_string(e), loops[n - 2 + k].var->name,
              sram->shape[sram->shape.size() - 2], sram->shape.back());
        }
      }
    }
    std::vector<Loop> outer(loops.begin(), loops.end() - 2);
    Expr stile = tile_of(sram, sidx), dtile = tile_of(dram, didx);
    for (const Expr &g : load_guards) {
      for (size_t k = n - 2; k < n; ++k) {
        if (uses_var(g, loops[k].var)) {
          fail("dma_copy into '{}': the guard `{}` cuts through a tile; padding is whole tiles",
               dst->name, to_string(g));
        }
      }
    }
    // Pick x (and y) from the innermost outer loops when their strides allow it.
    int nd = 0;
    int64_t cs[2] = {0, 0}, cd[2] = {0, 0};
    if (outer.size() >= 1 && coeffs(outer.back(), stile, dtile, &cs[1], &cd[1]) && cs[1] == 1 &&
        cd[1] == 1) {
      nd = 1;
      bool x_guard = false;
      for (const Expr &g : store_guards) x_guard |= uses_var(g, outer.back().var);
      if (x_guard) nd = 0;  // a store cannot shrink x without changing its row pitch
      if (nd == 1 && outer.size() >= 2 &&
          coeffs(outer[outer.size() - 2], stile, dtile, &cs[0], &cd[0]) &&
          cs[0] == outer.back().extent && cd[0] >= 0) {
        nd = 2;
      }
    }
    if (nd == 0 && !outer.empty() && !store_guards.empty()) {
      // Row-by-row stores: x stays a loop; each DMA moves one tile.
    }
    std::vector<Loop> dims(outer.end() - nd, outer.end());
    std::vector<Loop> rest(outer.begin(), outer.end() - nd);
    std::vector<Expr> sizes = {c32(1), c32(1)}, pads_lo = {c32(0), c32(0)},
                      pads_hi = {c32(0), c32(0)};
    Expr stride = c32(1);
    std::vector<std::pair<Var, Expr>> at_start, at_first;
    std::vector<Expr> remaining_guards;
    const std::vector<Expr> &guards = is_load ? load_guards : store_guards;
    std::vector<DimBounds> bounds(2);
    for (const Expr &g : guards) {
      int which = -1;
      for (int d = 0; d < nd; ++d) {
        if (uses_var(g, dims[d].var)) which = which == -1 ? d : 2;
      }
      if (which == 2)
        fail("dma_copy of '{}': the guard `{}` mixes two dimensions", dst->name, to_string(g));
      if (which == -1) {
        if (is_load && within_tensor(g, dram, didx)) {
          // Blocks past the end of the DRAM tensor, loaded by a tail tile (a split factor that
          // does not divide its axis): they do not exist, and no stored result reads them
          // (every use is in the same tail), so they are skipped rather than zeroed.
          remaining_guards.push_back(g);
          continue;
        }
        if (is_load) {
          fail(
              "dma_copy into '{}': the guard `{}` does not follow the DMA's rows or columns, so "
              "it cannot become padding; split so that partial tiles fall on the innermost two "
              "tile dimensions",
              dst->name, to_string(g));
        }
        remaining_guards.push_back(g);
        continue;
      }
      add_bound(g, dims[which].var, &bounds[nd == 2 ? which : 1], dst);
    }
    for (int d = 0; d < nd; ++d) {
      int slot = nd == 2 ? d : 1;
      int64_t ext = dims[d].extent;
      Expr lo = c32(0), hi = c32(ext);
      for (const Expr &l : bounds[slot].lower) lo = max(lo, l);
      for (const Expr &h : bounds[slot].upper) hi = min(hi, h);
      lo = simplify(min(lo, c32(ext)));
      hi = simplify(max(min(hi, c32(ext)), lo));
      pads_lo[slot] = lo;
      pads_hi[slot] = simplify(c32(ext) - hi);
      sizes[slot] = simplify(hi - lo);
      at_start.emplace_back(dims[d].var, c32(0));
      at_first.emplace_back(dims[d].var, lo);
    }
    if (nd == 2) stride = c32(cd[0]);
    Dma dma;
    dma.dir = is_load ? DmaDir::kLoad : DmaDir::kStore;
    dma.mem = is_load ? mem_of_scope(sram->scope) : to_inp ? isa::MemId::kInp : isa::MemId::kOut;
    dma.sram = sram;
    dma.dram = dram;
    dma.sram_index = simplify(substitute(stile, at_start));
    dma.dram_index = simplify(substitute(dtile, is_load ? at_first : at_start));
    dma.y_size = sizes[0];
    dma.x_size = sizes[1];
    dma.x_stride = nd == 2 ? stride : (nd == 1 ? sizes[1] : c32(1));
    dma.pad_top = pads_lo[0];
    dma.pad_bottom = pads_hi[0];
    dma.pad_left = pads_lo[1];
    dma.pad_right = pads_hi[1];
    if (!is_load) {
      dma.pad_top = dma.pad_bottom = dma.pad_left = dma.pad_right = c32(0);
      if (nd == 2) {
        // Rows past the guard are not stored; columns are whole (checked above).
        dma.x_size = c32(dims[1].extent);
      }
    }
    Stmt s = Dma::make(dma);
    for (const Expr &g : remaining_guards) s = IfThenElse::make(g, s);
    for (size_t i = rest.size(); i-- > 0;)
      s = For::make(rest[i].var, rest[i].extent, ForKind::kSerial, s);
    return s;
  }

  static void split_conj(const Expr &c, std::vector<Expr> *out) {
    if (const And *a = c.as<And>()) {
      split_conj(a->a, out);
      split_conj(a->b, out);
    } else {
      out->push_back(c);
    }
  }

  // Whether g says only that a DRAM index lies inside the tensor: idx < extent or idx >= 0.
  static bool within_tensor(const Expr &g, const Buffer &dram, const std::vector<Expr> &didx) {
    for (size_t k = 0; k < didx.size(); ++k) {
      const Expr idx = simplify(didx[k]);
      if (const LT *x = g.as<LT>()) {
        int64_t hi = 0;
        if (as_const(x->b, &hi) && hi == dram->shape[k] && structural_equal(simplify(x->a), idx))
          return true;
      }
      if (const GE *x = g.as<GE>()) {
        if (is_const(x->b, 0) && structural_equal(simplify(x->a), idx)) return true;
      }
    }
    return false;
  }

  static bool coeffs(const Loop &l, const Expr &s, const Expr &d, int64_t *cs, int64_t *cd) {
    return affine_coeff(s, l.var, cs) && affine_coeff(d, l.var, cd);
  }

  // g is a comparison on v: record v >= lo or v < hi.
  static void add_bound(const Expr &g, const Var &v, DimBounds *b, const Buffer &dst) {
    Expr diff;  // g <=> diff >= 0
    if (const GE *x = g.as<GE>()) diff = x->a - x->b;
    if (const LE *x = g.as<LE>()) diff = x->b - x->a;
    if (const LT *x = g.as<LT>()) diff = x->b - x->a - 1;
    if (const GT *x = g.as<GT>()) diff = x->a - x->b - 1;
    int64_t c = 0;
    if (!diff.defined() || !affine_coeff(diff, v, &c) || (c != 1 && c != -1)) {
      fail("dma_copy of '{}': the guard `{}` is not a bound on one DMA dimension", dst->name,
           to_string(g));
    }
    Expr rest = simplify(substitute(diff, {{v, c32(0)}}));
    if (c == 1) {
      b->lower.push_back(simplify(c32(0) - rest));  // v >= -rest
    } else {
      b->upper.push_back(simplify(rest + 1));  // v <= rest
    }
  }

  void check_tile(const Buffer &sram, const Buffer &dram) {
    std::vector<int64_t> want = intrin::tile_shape(config_, sram->scope);
    size_t r = sram->shape.size(), q = dram->shape.size();
    if (r < 2 || sram->shape[r - 2] != want[0] || sram->shape[r - 1] != want[1]) {
      fail("dma_copy: buffer '{}' in scope '{}' must end in the config's {}x{} tile", sram->name,
           scope_name(sram->scope), want[0], want[1]);
    }
    if (q < 2 || dram->shape[q - 2] != want[0] || dram->shape[q - 1] != want[1]) {
      fail("dma_copy: DRAM tensor '{}' must be in a blocked layout ending in the {}x{} tile",
           dram->name, want[0], want[1]);
    }
    DataType t = intrin::scope_dtype(config_, sram->scope);
    if (sram->dtype != t) {
      fail("dma_copy: buffer '{}' holds {} but the {} scratchpad holds {}", sram->name,
           sram->dtype.str(), scope_name(sram->scope), t.str());
    }
  }

  const isa::HwConfig &config_;
};

}  // namespace

Func lower_dma_copies(const Func &f, const isa::HwConfig &config) {
  return {f.name, f.params, simplify(DmaLowering(config).mutate(f.body))};
}

}  // namespace vacc::tir
