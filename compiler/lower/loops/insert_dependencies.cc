#include "vacc/lower/loops/insert_dependencies.h"

#include <map>
#include <set>

#include "vacc/support/error.h"
#include "vacc/tir/functor.h"

namespace vacc::tir {
namespace {

using isa::Engine;

// First and last engine of each channel in a subtree.
using Summary = std::map<int, std::pair<Engine, Engine>>;

int channel_of(const Stmt &s) {
  int ch = -1;
  auto see = [&](const Buffer &b) {
    if (!b || b->vthread < 0) return;
    VACC_CHECK(ch == -1 || ch == b->vthread) << "a statement touches two virtual threads";
    ch = b->vthread;
  };
  if (const Dma *d = s.as<Dma>()) {
    see(d->sram);
    if (d->dram->scope != Scope::kGlobal) see(d->dram);  // a STORE INP's destination
  }
  if (const Gemm *g = s.as<Gemm>()) {
    see(g->acc);
    see(g->inp);
    see(g->wgt);
  }
  if (const Alu *a = s.as<Alu>()) {
    see(a->dst);
    see(a->src);
  }
  return ch;
}

// Tokens from `a` to `b`: pushes after the earlier statement, pops before the later one,
// relayed through the compute engine between load and store.
void link(Engine a, Engine b, std::vector<Stmt> *after, std::vector<Stmt> *before) {
  int x = static_cast<int>(a), y = static_cast<int>(b);
  int step = y > x ? 1 : -1;
  Engine next = static_cast<Engine>(x + step);
  after->push_back(DepPush::make(a, next));
  for (int e = x + step; e != y; e += step) {
    Engine cur = static_cast<Engine>(e), nxt = static_cast<Engine>(e + step);
    before->push_back(DepPop::make(static_cast<Engine>(e - step), cur));
    before->push_back(DepPush::make(cur, nxt));
  }
  before->push_back(DepPop::make(static_cast<Engine>(y - step), b));
}

class Inserter {
 public:
  Stmt run(const Stmt &s, Summary *sum) {
    Engine e;
    if (engine_of(s, &e)) {
      (*sum)[channel_of(s)] = {e, e};
      return s;
    }
    if (const Seq *q = s.as<Seq>()) return seq(q->stmts, sum, nullptr);
    if (const For *f = s.as<For>()) {
      VACC_CHECK(f->for_kind != ForKind::kVThread) << "inject_virtual_threads must run first";
      std::vector<Stmt> body =
          f->body.as<Seq>() ? f->body.as<Seq>()->stmts : std::vector<Stmt>{f->body};
      std::vector<Stmt> pro, epi;
      Stmt b = seq(body, sum, &pro, &epi);
      if (sum->empty()) return s;
      std::vector<Stmt> out = pro;
      out.push_back(For::make(f->var, f->extent, f->for_kind, b));
      out.insert(out.end(), epi.begin(), epi.end());
      return Seq::make(out);
    }
    if (const Allocate *a = s.as<Allocate>()) {
      return Allocate::make(a->buffer, run(a->body, sum), a->base);
    }
    if (const Attr *a = s.as<Attr>()) return Attr::make(a->key, a->value, run(a->body, sum));
    if (const IfThenElse *i = s.as<IfThenElse>()) {
      Summary t, e2;
      Stmt then_case = run(i->then_case, &t);
      Stmt else_case = i->else_case.defined() ? run(i->else_case, &e2) : Stmt();
      VACC_CHECK(e2.empty() || t == e2) << "branches on different engines";
      *sum = t;
      return IfThenElse::make(i->cond, then_case, else_case);
    }
    return s;  // scalar code and tokens: no engine
  }

 private:
  Stmt seq(const std::vector<Stmt> &children, Summary *sum, std::vector<Stmt> *pro = nullptr,
           std::vector<Stmt> *epi = nullptr) {
    size_t n = children.size();
    std::vector<Stmt> body(n);
    std::vector<Summary> sums(n);
    std::set<int> chans;
    for (size_t i = 0; i < n; ++i) {
      body[i] = run(children[i], &sums[i]);
      for (const auto &[c, fl] : sums[i]) {
        if (c >= 0) chans.insert(c);
      }
    }
    if (chans.empty()) chans.insert(-1);
    // A statement shared by all threads belongs to every channel.
    for (Summary &s : sums) {
      auto it = s.find(-1);
      if (it == s.end() || (chans.size() == 1 && *chans.begin() == -1)) continue;
      auto fl = it->second;
      s.erase(it);
      for (int c : chans) {
        if (!s.count(c)) s[c] = fl;
      }
    }
    std::vector<std::vector<Stmt>> before(n), after(n);
    sum->clear();
    for (int c : chans) {
      int prev = -1, first = -1;
      for (size_t i = 0; i < n; ++i) {
        auto it = sums[i].find(c);
        if (it == sums[i].end()) continue;
        if (first < 0) first = static_cast<int>(i);
        if (prev >= 0) {
          Engine last = sums[prev].at(c).second;
          if (last != it->second.first) link(last, it->second.first, &after[prev], &before[i]);
        }
        prev = static_cast<int>(i);
      }
      if (first < 0) continue;
      Engine f = sums[first].at(c).first, l = sums[prev].at(c).second;
      (*sum)[c] = {f, l};
      if (pro && f != l) {
        // Loop-carried: the end of one iteration releases the start of the next.
        link(l, f, &after[prev], &before[first]);
        // One token is queued before the loop for the first iteration, and the one the last
        // iteration leaves behind is drained after it (first hop of a relay).
        std::vector<Stmt> pre_push, pre_pops;
        link(l, f, &pre_push, &pre_pops);
        pro->insert(pro->end(), pre_push.begin(), pre_push.end());
        epi->push_back(pre_pops.front());
      }
    }
    std::vector<Stmt> out;
    for (size_t i = 0; i < n; ++i) {
      out.insert(out.end(), before[i].begin(), before[i].end());
      out.push_back(body[i]);
      out.insert(out.end(), after[i].begin(), after[i].end());
    }
    return Seq::make(out);
  }
};

}  // namespace

Func insert_dependencies(const Func &f) {
  Summary sum;
  return {f.name, f.params, Inserter().run(f.body, &sum)};
}

}  // namespace vacc::tir
